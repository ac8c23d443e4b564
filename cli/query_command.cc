// tracetable query TABLE [--start-us A] [--end-us B] [--resolution-us R]
//                        [--pid P[:TID]]... [--host H]... [--limit N]
#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "format/time.h"
#include "query/trace_json.h"
#include "query/window.h"

namespace tracetable::cli {
namespace po = boost::program_options;

int QueryMain(int argc, char** argv) {
  po::options_description opts(
      "usage: tracetable query TABLE [options]\n\n"
      "Prints the window [start, end] as a Chrome trace JSON object: every event at least\n"
      "one resolution long exactly, shorter ones as events or 'tracetable.summary' items\n"
      "with exact counts. Times are absolute microseconds, as in the input.\n\noptions");
  std::string start_us, end_us, res_us;
  std::vector<std::string> pids, hosts;
  uint64_t limit = 0;
  opts.add_options()
      ("help,h", "show this help")
      ("start-us", po::value(&start_us), "window start (default: the trace start)")
      ("end-us", po::value(&end_us), "window end (default: the trace end)")
      ("resolution-us", po::value(&res_us),
       "smallest duration drawn one by one; 0 = every event (default: window / 2000)")
      ("pid", po::value(&pids), "only process P, or thread P:TID (repeatable)")
      ("host", po::value(&hosts), "only processes of host H (repeatable)")
      ("limit", po::value(&limit)->default_value(0),
       "at most N items, earliest first; the answer then says \"truncated\":true");
  std::vector<std::string> args;
  po::variables_map vm;
  if (auto exit = ParseCommandLine("query", argc, argv, opts, &args, 1, &vm)) return *exit;
  const std::string path = args.empty() ? "" : args[0];
  if (path.empty()) return Fail("query", "no table given (see --help)");
  absl::StatusOr<std::unique_ptr<Table>> opened = Table::Open(path);
  if (!opened.ok()) return Fail("query", opened.status().message());
  const Table& t = **opened;
  WindowRequest req;
  req.start = t.meta().min_ts();
  req.end = t.meta().max_end();
  if (!start_us.empty()) {
    absl::StatusOr<int64_t> v = ParseTableTime(t, start_us, "start-us");
    if (!v.ok()) return Fail("query", v.status().message());
    req.start = *v;
  }
  if (!end_us.empty()) {
    absl::StatusOr<int64_t> v = ParseTableTime(t, end_us, "end-us");
    if (!v.ok()) return Fail("query", v.status().message());
    req.end = *v;
  }
  if (req.end < req.start) return Fail("query", "--end-us is before --start-us");
  if (res_us.empty()) {
    req.resolution = (req.end - req.start) / 2000;
  } else {
    absl::StatusOr<NsPs> r = ParseMicros(res_us);
    if (!r.ok() || r->ns < 0) return Fail("query", absl::StrCat("--resolution-us: bad value '", res_us, "'"));
    if (r->ns > INT64_MAX / 1000 - 1) return Fail("query", "--resolution-us is too large");
    req.resolution = r->ns * 1000 + r->ps;
  }
  req.limit = limit;
  absl::StatusOr<std::vector<uint32_t>> tracks = SelectTracks(t, TrackFilter{{}, pids, hosts});
  if (!tracks.ok()) return Fail("query", tracks.status().message());
  req.tracks = *tracks;
  if (req.tracks.empty() && (!pids.empty() || !hosts.empty())) return Fail("query", "no track matches");
  absl::StatusOr<WindowResult> res = QueryWindow(t, req);
  if (!res.ok()) return Fail("query", res.status().message());
  std::string out;
  if (absl::Status s = AppendWindowJson(t, req, *res, TraceJsonOptions(), &out); !s.ok()) {
    return Fail("query", s.message());
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : Fail("query", "cannot write to stdout");
}

}  // namespace tracetable::cli
