// tracetable: convert traces into .tracetable stores and query them.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string_view>

#include "cli/common.h"
#include "store/table_format.h"

namespace {

constexpr char kUsage[] = R"(tracetable )" TRACETABLE_VERSION R"( - a streaming trace store and query engine

usage: tracetable <command> [options]

commands:
  ingest   convert Chrome trace JSON (.json, .json.gz) and XSpace (.xplane.pb)
           files into a .tracetable
  info     show a table's span, tracks, counts, levels, size and warnings
  query    print the window [start, end] at a resolution as Chrome trace JSON
  export   write a table (or a window of it) back as a Chrome trace
  search   print the events whose name contains a text, a page at a time
  memory   memory profile: memory IDs, peak, allocations live at the peak
           or at a time
  verify   check every tile, key and count of a table
  bench-queries  time window queries in one process (for bench/run)
  serve    serve tables over HTTP: JSON API and a timeline viewer in the browser

Run 'tracetable <command> --help' for a command's options.
)";

// A fresh process spends a third of its first large query, and a tenth of an
// ingest, faulting in 4 KiB pages one by one (bench/results). glibc backs its
// heap with transparent huge pages when asked through a tunable, which is read
// only at process start: so set it once and start again. THP in "madvise"
// mode (Debian's default) then applies; with THP off nothing changes. Any
// GLIBC_TUNABLES the user set are left alone.
void UseHugePagesForTheHeap(char** argv) {
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
  if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("GLIBC_TUNABLES");  // exec failed: go on as we are
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tracetable::cli;
  UseHugePagesForTheHeap(argv);
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::cout << "tracetable " TRACETABLE_VERSION "\n";
    return 0;
  }
  const std::string_view cmd = argv[1];
  // Subcommands see argv[0] = "tracetable <cmd>" semantics: argv + 1.
  if (cmd == "ingest") return IngestMain(argc - 1, argv + 1);
  if (cmd == "info") return InfoMain(argc - 1, argv + 1);
  if (cmd == "query") return QueryMain(argc - 1, argv + 1);
  if (cmd == "export") return ExportMain(argc - 1, argv + 1);
  if (cmd == "search") return SearchMain(argc - 1, argv + 1);
  if (cmd == "memory") return MemoryMain(argc - 1, argv + 1);
  if (cmd == "verify") return VerifyMain(argc - 1, argv + 1);
  if (cmd == "bench-queries") return BenchQueriesMain(argc - 1, argv + 1);
  if (cmd == "serve") return ServeMain(argc - 1, argv + 1);
  std::cerr << "tracetable: unknown command '" << cmd << "'\n\n" << kUsage;
  return 2;
}
