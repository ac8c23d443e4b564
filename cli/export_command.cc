// tracetable export TABLE -o OUT.json[.gz] [--start-us A --end-us B]
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "query/export.h"

namespace tracetable::cli {
namespace po = boost::program_options;

int ExportMain(int argc, char** argv) {
  po::options_description opts(
      "usage: tracetable export TABLE -o OUT.json[.gz] [options]\n\n"
      "Writes the table (or events starting in a window) as a Chrome trace that\n"
      "chrome://tracing, Perfetto and tracetable itself read, with all arguments.\n\noptions");
  std::string output, start_us, end_us;
  opts.add_options()
      ("help,h", "show this help")
      ("output,o", po::value(&output), "output file; .gz compresses")
      ("start-us", po::value(&start_us), "only events starting at or after this time")
      ("end-us", po::value(&end_us), "only events starting at or before this time");
  std::vector<std::string> args;
  po::variables_map vm;
  if (auto exit = ParseCommandLine("export", argc, argv, opts, &args, 1, &vm)) return *exit;
  const std::string path = args.empty() ? "" : args[0];
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
  absl::StatusOr<uint64_t> count = ExportChromeTrace(t, start, end, output);
  if (!count.ok()) return Fail("export", count.status().message());
  std::fprintf(stderr, "exported %llu events to %s\n", static_cast<unsigned long long>(*count),
               output.c_str());
  return 0;
}

}  // namespace tracetable::cli
