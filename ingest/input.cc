#include "ingest/input.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ingest/chrome_json/parallel_runs.h"
#include "store/thread_name.h"
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
  const std::string file = fs::path(path).filename().string();
  // Trimmed as a view: GCC 12 warns (-Wrestrict) of string::resize here.
  std::string_view name = file;
  for (std::string_view suffix : {".xplane.pb", ".json.gz", ".json", ".gz"}) {
    if (name.ends_with(suffix)) {
      name.remove_suffix(suffix.size());
      break;
    }
  }
  if (name.ends_with(".trace")) name.remove_suffix(6);
  return std::string(name);
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

namespace {

// One input of a parallel read: its own queue, so inputs read at once never
// interleave, and the builder applies them one after another.
struct InputRead {
  explicit InputRead(SharedStrings* strings) : queue(strings) {}
  PipelineQueue queue;
  absl::Status status;
  std::atomic<uint64_t> done{0};
};

// Reads `in` into `r->queue`, parsing on `threads` (see ReadInputsOptions).
void ReadOne(const InputFile& in, InputRead* r, int threads, const ReadInputsOptions& options,
             const std::function<void()>& progress) {
  InputClock clock;
  ProducerSink sink(&r->queue, &clock);
  std::unique_ptr<chrome_json::ParallelRuns> parallel;
  if (threads > 1 && in.kind == InputFile::Kind::kChromeJson) {
    parallel = std::make_unique<chrome_json::ParallelRuns>(
        &r->queue, &clock, &sink, chrome_json::ParallelOptions{threads, options.run_bytes});
  }
  r->status = ReadInput(in, &sink, [&](uint64_t done, uint64_t) {
    r->done.store(done, std::memory_order_relaxed);
    progress();
  }, options.strict, parallel.get());
  if (!r->status.ok()) r->queue.Fail(r->status);
  parallel.reset();  // its threads are done with the queue
  sink.Close();
  r->queue.Finish();
}

}  // namespace

absl::Status ReadInputs(const std::vector<InputFile>& inputs, TableBuilder* builder,
                        const ProgressFn& progress, const ReadInputsOptions& options) {
  const size_t n = inputs.size();
  // Several inputs share the threads: each is read (and parsed) by one, or
  // by a few when there are more threads than inputs.
  const size_t readers = std::clamp<size_t>(static_cast<size_t>(std::max(options.threads, 1)), 1, std::max<size_t>(n, 1));
  const int parse_threads = std::max(1, options.threads / static_cast<int>(readers));
  // Inputs read ahead of the one being applied wait in their queues (at most
  // a few batches each, their readers then block): bound how many.
  const size_t window = readers + 1;
  std::vector<std::unique_ptr<InputRead>> reads;
  for (size_t i = 0; i < n; ++i) reads.push_back(std::make_unique<InputRead>(builder->shared_strings()));
  uint64_t total = 0;
  for (const InputFile& f : inputs) total += f.bytes;

  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0, applying = 0;
  bool stop = false;
  std::mutex progress_mu;  // progress is called from every reading thread
  auto report = [&] {
    if (!progress) return;
    uint64_t done = 0;
    for (size_t i = 0; i < n; ++i) {
      done += reads[i]->done.load(std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> lock(progress_mu);
    progress(done, total);
  };
  auto read_loop = [&] {
    NameThisThread("tt-read");
    for (;;) {
      size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || next >= n || next < applying + window; });
        if (stop || next >= n) return;
        i = next++;
      }
      ReadOne(inputs[i], reads[i].get(), parse_threads, options, report);
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 0; t < readers; ++t) threads.emplace_back(read_loop);
  // Inputs are applied in order whoever read them, so the table is the one
  // a sequential read gives.
  absl::Status build_status;
  size_t last = 0;
  for (; last < n; ++last) {
    {
      std::lock_guard<std::mutex> lock(mu);
      applying = last;
      cv.notify_all();
    }
    build_status = reads[last]->queue.Drain(builder);
    if (!build_status.ok()) break;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  }
  // Inputs after a failed one are never applied: their readers stop at their next Add().
  for (size_t i = last + 1; i < n; ++i) reads[i]->queue.Fail(absl::CancelledError("an earlier input failed"));
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i <= last && i < n; ++i) {
    if (!reads[i]->status.ok()) return reads[i]->status;
  }
  if (!build_status.ok()) return build_status;
  for (size_t i = 0; i < n; ++i) builder->SetInputBytesOf(static_cast<int>(i), inputs[i].bytes);
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
