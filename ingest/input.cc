#include "ingest/input.h"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ingest/chrome_json/parallel_runs.h"
#include "ingest/chrome_json/reader.h"
#include "ingest/xspace/reader.h"
#include "store/pipelined_sink.h"

namespace tracetable {
namespace fs = std::filesystem;
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsTraceFileName(const std::string& name) {
  return EndsWith(name, ".xplane.pb") || EndsWith(name, ".json") || EndsWith(name, ".json.gz");
}

}  // namespace

std::string HostFromFileName(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  for (std::string_view suffix : {".xplane.pb", ".json.gz", ".json", ".gz"}) {
    if (EndsWith(name, suffix)) {
      name.resize(name.size() - suffix.size());
      break;
    }
  }
  if (EndsWith(name, ".trace")) name.resize(name.size() - 6);
  return name;
}

absl::StatusOr<std::vector<InputFile>> ExpandInputs(const std::vector<std::string>& args) {
  std::vector<InputFile> out;
  for (const std::string& arg : args) {
    std::error_code ec;
    fs::file_status st = fs::status(arg, ec);
    if (ec || !fs::exists(st)) return absl::NotFoundError(absl::StrCat(arg, ": no such file or folder"));
    std::vector<std::string> files;
    if (fs::is_directory(st)) {
      for (const fs::directory_entry& e : fs::directory_iterator(arg, ec)) {
        if (e.is_regular_file() && IsTraceFileName(e.path().filename().string())) {
          files.push_back(e.path().string());
        }
      }
      if (ec) return absl::InvalidArgumentError(absl::StrCat(arg, ": cannot list folder: ", ec.message()));
      if (files.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            arg, ": folder holds no trace files (*.xplane.pb, *.json, *.json.gz)"));
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    for (const std::string& f : files) {
      InputFile in;
      in.path = f;
      in.kind = EndsWith(f, ".xplane.pb") || EndsWith(f, ".pb") ? InputFile::Kind::kXSpace
                                                               : InputFile::Kind::kChromeJson;
      in.bytes = fs::is_regular_file(f, ec) ? fs::file_size(f, ec) : 0;
      out.push_back(std::move(in));
    }
  }
  if (out.size() > 1) {
    for (InputFile& in : out) {
      if (in.kind == InputFile::Kind::kChromeJson) in.host = HostFromFileName(in.path);
    }
  }
  return out;
}

absl::Status ReadInputs(const std::vector<InputFile>& inputs, TableBuilder* builder,
                        const ProgressFn& progress, const ReadInputsOptions& options) {
  PipelineQueue queue;
  uint64_t total = 0;
  for (const InputFile& f : inputs) total += f.bytes;
  absl::Status read_status;
  std::thread reader([&] {
    uint64_t base = 0;
    for (size_t i = 0; i < inputs.size() && read_status.ok(); ++i) {
      InputClock clock;
      ProducerSink sink(&queue, &clock);
      std::unique_ptr<chrome_json::ParallelRuns> parallel;
      if (options.threads > 1 && inputs[i].kind == InputFile::Kind::kChromeJson) {
        parallel = std::make_unique<chrome_json::ParallelRuns>(
            &queue, &clock, &sink, chrome_json::ParallelOptions{options.threads, options.run_bytes});
      }
      read_status = ReadInput(inputs[i], &sink, [&](uint64_t done, uint64_t) {
        if (progress) progress(base + done, total);
      }, options.strict, parallel.get());
      if (!read_status.ok()) queue.Fail(read_status);
      parallel.reset();  // its threads are done with the queue
      sink.Close();
      base += inputs[i].bytes;
    }
    queue.Finish();
  });
  absl::Status build_status = queue.Drain(builder);
  reader.join();
  if (!read_status.ok()) return read_status;
  if (!build_status.ok()) return build_status;
  for (size_t i = 0; i < inputs.size(); ++i) builder->SetInputBytesOf(static_cast<int>(i), inputs[i].bytes);
  return absl::OkStatus();
}

absl::Status ReadInput(const InputFile& input, EventSink* sink, const ProgressFn& progress,
                       bool strict, chrome_json::ParallelRuns* parallel) {
  if (input.kind == InputFile::Kind::kXSpace) {
    return ReadXSpace(input.path, input.host, sink, progress);
  }
  ReadOptions options;
  options.progress = progress;
  options.strict = strict;
  options.parallel = parallel;
  return ReadChromeJson(input.path, input.host, sink, options);
}

}  // namespace tracetable
