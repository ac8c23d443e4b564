// tracetable export TABLE -o OUT.json[.gz] [--start-us A --end-us B]
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "query/trace_json.h"
#include "query/window.h"

namespace tracetable::cli {
namespace po = boost::program_options;
namespace {

// Writes plain or gzip output; the file appears under its name only when
// complete.
class OutputFile {
 public:
  absl::Status Open(const std::string& path) {
    path_ = path;
    temp_ = path + ".tmp";
    gzip_ = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    if (gzip_) {
      gz_ = gzopen(temp_.c_str(), "wb6");
      if (!gz_) return absl::InternalError(absl::StrCat("cannot create ", temp_));
    } else {
      f_ = std::fopen(temp_.c_str(), "wb");
      if (!f_) return absl::InternalError(absl::StrCat("cannot create ", temp_));
    }
    return absl::OkStatus();
  }
  bool Write(const std::string& s) {
    if (s.empty()) return true;
    if (gzip_) return gzwrite(gz_, s.data(), static_cast<unsigned>(s.size())) == static_cast<int>(s.size());
    return std::fwrite(s.data(), 1, s.size(), f_) == s.size();
  }
  absl::Status Close() {
    bool ok = gzip_ ? gzclose(gz_) == Z_OK : std::fclose(f_) == 0;
    gz_ = nullptr;
    f_ = nullptr;
    if (!ok) return absl::InternalError(absl::StrCat("cannot write ", temp_));
    std::error_code ec;
    std::filesystem::rename(temp_, path_, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot rename to ", path_, ": ", ec.message()));
    return absl::OkStatus();
  }
  ~OutputFile() {
    if (gz_) gzclose(gz_);
    if (f_) std::fclose(f_);
    if (gz_ || f_) std::remove(temp_.c_str());
  }

 private:
  std::string path_, temp_;
  bool gzip_ = false;
  gzFile gz_ = nullptr;
  std::FILE* f_ = nullptr;
};

// Streams every event of one track whose start is in [start, end], chunk by
// chunk so memory stays bounded.
absl::Status ExportTrack(const Table& t, uint32_t track, int64_t start, int64_t end,
                         OutputFile* out, uint64_t* count, bool* first) {
  const int64_t chunk = std::max<int64_t>((end - start) / 256 + 1, 1'000'000);
  for (int64_t a = start; a <= end; a += chunk) {
    const int64_t b = std::min(end, a + chunk - 1);
    WindowRequest req;
    req.start = a;
    req.end = b;
    req.resolution = 0;
    req.tracks = {track};
    absl::StatusOr<WindowResult> res = QueryWindow(t, req);
    if (!res.ok()) return res.status();
    std::string text;
    for (const WindowItem& item : res->items) {
      if (item.row.ts < a || item.row.ts > b) continue;  // once, in its start chunk
      if (!*first) text += ",\n";
      *first = false;
      AppendItemJson(t, item, /*include_args=*/true, &text);
      text.resize(text.size() - 2);  // AppendItemJson ends with ",\n"
      ++*count;
    }
    if (!out->Write(text)) return absl::InternalError("write failed (disk full?)");
    if (b == end) break;
  }
  return absl::OkStatus();
}

}  // namespace

int ExportMain(int argc, char** argv) {
  po::options_description opts(
      "usage: tracetable export TABLE -o OUT.json[.gz] [options]\n\n"
      "Writes the table (or events starting in a window) as a Chrome trace that\n"
      "chrome://tracing, Perfetto and tracetable itself read, with all arguments.\n\noptions");
  std::string path, output, start_us, end_us;
  opts.add_options()
      ("help,h", "show this help")
      ("output,o", po::value(&output), "output file; .gz compresses")
      ("start-us", po::value(&start_us), "only events starting at or after this time")
      ("end-us", po::value(&end_us), "only events starting at or before this time");
  po::options_description all;
  all.add(opts).add_options()("table", po::value(&path));
  po::positional_options_description pos;
  pos.add("table", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Fail("export", absl::StrCat(e.what(), " (see --help)"));
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  if (path.empty() || output.empty()) return Fail("export", "usage: tracetable export TABLE -o OUT.json");
  absl::StatusOr<std::unique_ptr<Table>> opened = Table::Open(path);
  if (!opened.ok()) return Fail("export", opened.status().message());
  const Table& t = **opened;
  int64_t start = t.meta().min_ts(), end = t.meta().max_end();
  if (!start_us.empty()) {
    absl::StatusOr<int64_t> v = ParseTableTime(t, start_us, "start-us");
    if (!v.ok()) return Fail("export", v.status().message());
    start = *v;
  }
  if (!end_us.empty()) {
    absl::StatusOr<int64_t> v = ParseTableTime(t, end_us, "end-us");
    if (!v.ok()) return Fail("export", v.status().message());
    end = *v;
  }
  OutputFile out;
  if (absl::Status s = out.Open(output); !s.ok()) return Fail("export", s.message());
  std::vector<uint32_t> tracks;
  for (int i = 0; i < t.resources().tracks_size(); ++i) tracks.push_back(i);
  std::string head = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  AppendMetadataEvents(t, tracks, &head);
  // Events are written with a leading comma after the first element.
  bool first = head.size() < 2 || head.substr(head.size() - 2) != ",\n";
  if (!first) head.resize(head.size() - 2);
  uint64_t count = 0;
  bool ok = out.Write(head);
  for (uint32_t track : tracks) {
    if (!ok) break;
    absl::Status s = ExportTrack(t, track, start, end, &out, &count, &first);
    if (!s.ok()) return Fail("export", s.message());
  }
  ok = ok && out.Write("\n]}\n");
  if (!ok) return Fail("export", "write failed (disk full?)");
  if (absl::Status s = out.Close(); !s.ok()) return Fail("export", s.message());
  std::fprintf(stderr, "exported %llu events to %s\n", static_cast<unsigned long long>(count),
               output.c_str());
  return 0;
}

}  // namespace tracetable::cli
