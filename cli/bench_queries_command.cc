// tracetable bench-queries TABLE --windows FILE [--repeat N]
//
// Times window queries inside one process, with the table opened once: the
// latency a server sees, without process start and table open. Each line of
// FILE is "start_us end_us resolution_us [pid[:tid]]"; each answer line is
// JSON: {"i": line, "latency_us": ..., "items": ..., "summaries": ...,
// "tiles_read": ..., "bytes_read": ..., "json_bytes": ...}. Latency covers
// the query and its Chrome-JSON answer text.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "format/time.h"
#include "query/trace_json.h"
#include "query/window.h"

namespace tracetable::cli {
namespace po = boost::program_options;
namespace {

struct Line {
  std::string start, end, resolution, pid;
};

absl::StatusOr<std::vector<Line>> ReadWindows(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read"));
  std::vector<Line> out;
  std::string text;
  int n = 0;
  while (std::getline(in, text)) {
    ++n;
    if (text.empty() || text[0] == '#') continue;
    std::istringstream fields(text);
    Line l;
    if (!(fields >> l.start >> l.end >> l.resolution)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", n, ": expected 'start_us end_us resolution_us [pid[:tid]]'"));
    }
    fields >> l.pid;
    out.push_back(l);
  }
  return out;
}

}  // namespace

int BenchQueriesMain(int argc, char** argv) {
  po::options_description opts(
      "usage: tracetable bench-queries TABLE --windows FILE [--repeat N]\n\n"
      "Times window queries in one process (table opened once). FILE: one window a line,\n"
      "\"start_us end_us resolution_us [pid[:tid]]\". Prints one JSON line per query.\n\noptions");
  std::string windows;
  int repeat = 1;
  opts.add_options()("help,h", "show this help")(
      "windows", po::value(&windows), "the windows to run")(
      "repeat", po::value(&repeat)->default_value(1), "run each window N times (warm)");
  std::vector<std::string> args;
  po::variables_map vm;
  if (auto exit = ParseCommandLine("bench-queries", argc, argv, opts, &args, 1, &vm)) return *exit;
  if (args.empty() || windows.empty()) return Fail("bench-queries", "usage: tracetable bench-queries TABLE --windows FILE");
  absl::StatusOr<std::unique_ptr<Table>> opened = Table::Open(args[0]);
  if (!opened.ok()) return Fail("bench-queries", opened.status().message());
  const Table& t = **opened;
  KeepFreedMemoryForReuse();
  absl::StatusOr<std::vector<Line>> lines = ReadWindows(windows);
  if (!lines.ok()) return Fail("bench-queries", lines.status().message());
  for (size_t i = 0; i < lines->size(); ++i) {
    const Line& l = (*lines)[i];
    WindowRequest req;
    absl::StatusOr<int64_t> start = ParseTableTime(t, l.start, "start");
    absl::StatusOr<int64_t> end = ParseTableTime(t, l.end, "end");
    absl::StatusOr<NsPs> res = ParseMicros(l.resolution);
    if (!start.ok() || !end.ok() || !res.ok() || res->ns < 0) {
      return Fail("bench-queries", absl::StrCat(windows, ": bad window on line ", i + 1));
    }
    req.start = *start;
    req.end = *end;
    req.resolution = res->ns * 1000 + res->ps;
    if (!l.pid.empty()) {
      absl::StatusOr<std::vector<uint32_t>> tracks = SelectTracks(t, TrackFilter{{}, {l.pid}, {}});
      if (!tracks.ok()) return Fail("bench-queries", tracks.status().message());
      req.tracks = *tracks;
    }
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      absl::StatusOr<WindowResult> result = QueryWindow(t, req);
      if (!result.ok()) return Fail("bench-queries", result.status().message());
      std::string json;
      if (absl::Status s = AppendWindowJson(t, req, *result, TraceJsonOptions(), &json); !s.ok()) {
        return Fail("bench-queries", s.message());
      }
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      std::printf("{\"i\":%zu,\"latency_us\":%.1f,\"items\":%zu,\"summaries\":%llu,"
                  "\"tiles_read\":%llu,\"bytes_read\":%llu,\"json_bytes\":%zu}\n",
                  i, us, result->items.size(), static_cast<unsigned long long>(result->summaries),
                  static_cast<unsigned long long>(result->stats.tiles),
                  static_cast<unsigned long long>(result->stats.bytes), json.size());
    }
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace tracetable::cli
