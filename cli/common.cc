#include "cli/common.h"

#include <malloc.h>

#include <cctype>
#include <climits>
#include <filesystem>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/time.h"

namespace tracetable::cli {
namespace fs = std::filesystem;
namespace po = boost::program_options;

int Fail(std::string_view command, absl::string_view message) {
  std::cerr << "tracetable " << command << ": " << message << "\n";
  return 1;
}

std::optional<int> ParseCommandLine(std::string_view command, int argc, char** argv,
                                    const po::options_description& opts,
                                    std::vector<std::string>* positional, int max_positional,
                                    po::variables_map* vm) {
  po::options_description all;
  all.add(opts).add_options()("positional", po::value(positional));
  po::positional_options_description pos;
  pos.add("positional", max_positional);
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    return Fail(command, absl::StrCat(e.what(), " (see --help)"));
  }
  if (vm->count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  return std::nullopt;
}

void KeepFreedMemoryForReuse() {
  mallopt(M_MMAP_THRESHOLD, 512 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// A thread's malloc arena is a heap that glibc makes writable, and advises
// for huge pages (main.cc), as far as its first allocation and the top pad
// reach; what the heap grows into later gets 4 KiB pages, and what a free
// leaves at its top past the trim threshold is given back and faulted in
// again. The parse threads' strings and id maps and the tile workers'
// per-track vectors live in such heaps: at 2 threads a gen 10M ingest took
// 38k page faults (2k with this), held ~60 MB in 4 KiB pages (13 MB), and
// spent 16% more CPU, user time included (TLB misses). So every heap starts
// at its full 64 MiB (the top pad) and is never trimmed: an ingest is one
// process that ends when its table is written. Setting these turns off
// glibc's sliding mmap threshold, so it is pinned at 32 MiB, where the
// sliding one stops. The cost is RSS (+20 to +125 MiB at the default budget;
// docs/performance.md, s30), so a budget under 512 MiB, which asks for
// memory over speed, keeps glibc's defaults, and so do runs of shards,
// whose builders share one process and multiply the heaps (4 jobs: +200
// MiB).
void KeepIngestHeapWarm(uint64_t memory_budget) {
  if (memory_budget < (512ull << 20)) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

absl::StatusOr<uint64_t> ParseSize(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  uint64_t n = 0;
  if (i == 0 || !absl::SimpleAtoi(text.substr(0, i), &n)) {
    return absl::InvalidArgumentError(absl::StrCat("bad size '", text, "' (try 512M or 2G)"));
  }
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  uint64_t mult = 1;
  if (unit.empty() || unit == "B") {
    mult = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KIB") {
    mult = 1ull << 10;
  } else if (unit == "M" || unit == "MB" || unit == "MIB") {
    mult = 1ull << 20;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    mult = 1ull << 30;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("bad size unit in '", text, "' (K, M or G)"));
  }
  return n * mult;
}

absl::StatusOr<int64_t> ParseTableTime(const Table& table, const std::string& us,
                                       std::string_view option) {
  absl::StatusOr<NsPs> t = ParseMicros(us);
  if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat("--", Av(option), ": ", t.status().message()));
  const __int128 rel = (static_cast<__int128>(t->ns) - table.meta().origin_ns()) * 1000 + t->ps;
  const __int128 limit = static_cast<__int128>(INT64_MAX) / 2;
  if (rel > limit || rel < -limit) {
    return absl::InvalidArgumentError(absl::StrCat("--", Av(option), " ", us, " is far outside the trace"));
  }
  return static_cast<int64_t>(rel);
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

uint64_t DirectoryBytes(const std::string& path) {
  uint64_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(path, ec)) {
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  }
  return total;
}

}  // namespace tracetable::cli
