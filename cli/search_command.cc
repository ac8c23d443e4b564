// tracetable search TABLE TEXT [--start-us A --end-us B --limit N --cursor C]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "format/time.h"
#include "query/search.h"
#include "query/trace_json.h"

namespace tracetable::cli {
namespace po = boost::program_options;

int SearchMain(int argc, char** argv) {
  po::options_description opts(
      "usage: tracetable search TABLE TEXT [options]\n\n"
      "Prints the events whose name contains TEXT (ignoring case), in time order,\n"
      "one page: ts_us dur_us track id name. A next page starts at the printed\n"
      "cursor (--cursor). Tables with a search index answer from it; older ones\n"
      "are scanned.\n\noptions");
  std::string start_us, end_us, cursor;
  uint64_t limit = 20;
  int repeat = 1;
  opts.add_options()
      ("help,h", "show this help")
      ("start-us", po::value(&start_us), "only events overlapping [start, end]")
      ("end-us", po::value(&end_us), "")
      ("limit", po::value(&limit), "matches per page (default 20)")
      ("cursor", po::value(&cursor), "continue after a previous page")
      ("scan", "scan the events even if the table has an index")
      ("repeat", po::value(&repeat), "run the search N times and print the median time (benchmarks)");
  std::vector<std::string> args;
  po::variables_map vm;
  if (auto exit = ParseCommandLine("search", argc, argv, opts, &args, 2, &vm)) return *exit;
  if (args.size() != 2 || args[1].empty()) return Fail("search", "usage: tracetable search TABLE TEXT");
  absl::StatusOr<std::unique_ptr<Table>> opened = Table::Open(args[0]);
  if (!opened.ok()) return Fail("search", opened.status().message());
  const Table& t = **opened;
  SearchRequest req;
  req.start = t.meta().min_ts();
  req.end = t.meta().max_end();
  for (auto [text, option, out] : {std::tuple{&start_us, "start-us", &req.start}, {&end_us, "end-us", &req.end}}) {
    if (text->empty()) continue;
    absl::StatusOr<int64_t> v = ParseTableTime(t, *text, option);
    if (!v.ok()) return Fail("search", v.status().message());
    *out = *v;
  }
  if (!cursor.empty()) {
    req.after = DecodeCursor(cursor);
    if (!req.after) return Fail("search", "--cursor: not a cursor from a previous answer");
  }
  req.limit = std::max<uint64_t>(limit, 1);
  req.use_index = !vm.count("scan");
  for (int i = 0; i < t.resources().tracks_size(); ++i) req.tracks.push_back(static_cast<uint32_t>(i));
  std::vector<double> ms;
  absl::StatusOr<SearchResult> r;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    req.names = NamesContaining(t, args[1], false);
    r = Search(t, req);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!r.ok()) return Fail("search", r.status().message());
  }
  for (const WindowItem& m : r->matches) {
    std::cout << AbsoluteMicros(t, m.row.ts) << " " << FormatMicros(m.row.dur) << " "
              << m.track << " " << m.row.id << " " << t.String(m.row.name) << "\n";
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  std::fprintf(stderr, "%zu matches, %llu rows read, %s, median %.3f ms of %zu run(s)%s%s\n",
               r->matches.size(), static_cast<unsigned long long>(r->scanned),
               r->indexed ? "index" : "scan", ms[ms.size() / 2], ms.size(),
               r->more ? ", next cursor: " : "", r->more ? EncodeCursor(r->next).c_str() : "");
  return 0;
}

}  // namespace tracetable::cli
