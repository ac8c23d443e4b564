// tracetable memory TABLE [--id ID] [--host H] [--at-us T | --peak] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "format/absl_compat.h"
#include "query/memory.h"
#include "query/memory_json.h"
#include "query/trace_json.h"

namespace tracetable::cli {
namespace po = boost::program_options;

namespace {

std::string Bytes(int64_t b) {
  return b < 0 ? absl::StrCat("-", HumanBytes(static_cast<uint64_t>(-b)))
               : HumanBytes(static_cast<uint64_t>(b));
}

void PrintId(const Table& t, uint32_t id) {
  const proto::MemoryId& m = t.meta().memory().ids(static_cast<int>(id));
  std::cout << (m.host().empty() ? "" : m.host() + " ") << m.name() << " (" << m.source() << "): "
            << m.events() << " events, " << m.allocations() << " allocations, " << m.deallocations()
            << " deallocations\n";
  if (m.events() > 0) {
    std::cout << "  peak in use " << m.peak_in_use() << " B (" << Bytes(m.peak_in_use()) << ") at "
              << AbsoluteMicros(t, m.peak_ts()) << " us";
    if (m.has_peak_step()) std::cout << ", step " << m.peak_step();
    std::cout << "\n";
    if (m.reserved_track() != 0) {
      std::cout << "  peak reserved " << m.peak_reserved() << " B (" << Bytes(m.peak_reserved()) << ") at "
                << AbsoluteMicros(t, m.peak_reserved_ts()) << " us\n";
    }
  }
  std::cout << "  unpaired: " << m.frees_without_alloc() << " frees without allocation, "
            << m.allocs_never_freed() << " allocations never freed, " << m.allocs_at_live_addr()
            << " allocations at a live address, " << m.events_without_addr() << " events without address\n";
}

void PrintBreakdown(const Table& t, const MemoryBreakdown& b, uint64_t limit) {
  const proto::MemoryId& m = t.meta().memory().ids(static_cast<int>(b.id));
  std::cout << "\nbreakdown of " << (m.host().empty() ? "" : m.host() + " ") << m.name()
            << (b.at_peak ? " at the peak, " : " at ") << AbsoluteMicros(t, b.ts) << " us"
            << (b.before_first_event ? " (before its first event)" : "") << ": in use " << b.in_use
            << " B (" << Bytes(b.in_use) << ")\n";
  std::cout << absl::StrFormat("  %14s %14s  %-18s %-30s %-20s %-10s %-10s %s\n", "bytes", "requested",
                               "addr", "op", "shape", "data type", "region", "allocated at us");
  const uint64_t n = limit == 0 ? b.live.size() : std::min<uint64_t>(limit, b.live.size());
  int64_t shown = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const LiveAllocation& a = b.live[i];
    shown += a.bytes;
    std::cout << absl::StrFormat("  %14d %14d  0x%-16x %-30s %-20s %-10s %-10s %s\n", a.bytes, a.requested,
                                 a.addr, Av(a.op), Av(a.shape), Av(a.data_type), Av(a.region),
                                 AbsoluteMicros(t, a.alloc_ts));
  }
  if (n < b.live.size()) {
    std::cout << absl::StrFormat("  %14d  (%d more live allocations; --limit 0 lists all)\n",
                                 b.live_bytes - shown, b.live.size() - n);
  }
  std::cout << absl::StrFormat("  %14d  not attributed to a live allocation of the trace\n", b.unattributed);
  std::cout << absl::StrFormat("  %14d  in use (%d live allocations, %d B)\n", b.in_use, b.live.size(),
                               b.live_bytes);
}

}  // namespace

int MemoryMain(int argc, char** argv) {
  po::options_description opts(
      "usage: tracetable memory TABLE [options]\n\n"
      "Prints the memory IDs (allocators or devices, per host) of a table with\n"
      "their summary (peak in use and when, peak reserved, allocation and\n"
      "deallocation counts, unpaired events), and for each selected ID the\n"
      "allocations live at the peak (or at --at-us), largest first, with totals\n"
      "that add up to the bytes in use then.\n\noptions");
  std::string id, host, at_us;
  uint64_t limit = 20;
  int repeat = 1;
  opts.add_options()
      ("help,h", "show this help")
      ("id", po::value(&id), "only this memory ID (e.g. GPU_0_bfc, cuda:0)")
      ("host", po::value(&host), "only memory IDs of this host")
      ("at-us", po::value(&at_us), "breakdown after every event at or before this time (absolute us)")
      ("peak", "breakdown at the peak in use (the default)")
      ("limit", po::value(&limit), "rows per breakdown (default 20; 0 = all); totals cover all")
      ("json", "print JSON (the shape of GET /api/tables/{t}/memory, docs/api.md)")
      ("repeat", po::value(&repeat), "answer N times and print the median time to stderr (benchmarks)");
  std::vector<std::string> args;
  po::variables_map vm;
  if (auto exit = ParseCommandLine("memory", argc, argv, opts, &args, 1, &vm)) return *exit;
  if (args.size() != 1) return Fail("memory", "usage: tracetable memory TABLE");
  if (vm.count("peak") && !at_us.empty()) return Fail("memory", "give --at-us or --peak, not both");
  absl::StatusOr<std::unique_ptr<Table>> opened = Table::Open(args[0]);
  if (!opened.ok()) return Fail("memory", opened.status().message());
  const Table& t = **opened;
  std::optional<int64_t> at;
  if (!at_us.empty()) {
    absl::StatusOr<int64_t> v = ParseTableTime(t, at_us, "at-us");
    if (!v.ok()) return Fail("memory", v.status().message());
    at = *v;
  }
  absl::StatusOr<std::vector<uint32_t>> ids = SelectMemoryIds(t, id, host);
  if (!ids.ok()) return Fail("memory", ids.status().message());
  std::vector<double> ms;
  std::vector<MemoryBreakdown> breakdowns;
  for (int r = 0; r < std::max(repeat, 1); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    breakdowns.clear();
    for (uint32_t i : *ids) {
      if (t.meta().memory().ids(static_cast<int>(i)).events() == 0) continue;
      absl::StatusOr<MemoryBreakdown> b = at ? MemoryBreakdownAt(t, i, *at) : MemoryBreakdownAtPeak(t, i);
      if (!b.ok()) return Fail("memory", b.status().message());
      breakdowns.push_back(std::move(*b));
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (vm.count("json")) {
    std::string out = "{\"ids\":[";
    for (size_t k = 0; k < ids->size(); ++k) {
      if (k) out.push_back(',');
      AppendMemoryIdJson(t, (*ids)[k], &out);
    }
    out.append("],\"breakdowns\":[");
    for (size_t k = 0; k < breakdowns.size(); ++k) {
      if (k) out.push_back(',');
      AppendMemoryBreakdownJson(t, breakdowns[k], limit, &out);
    }
    out.append("]}\n");
    std::cout << out;
  } else {
    if (ids->empty()) std::cout << "no memory events in this table\n";
    for (uint32_t i : *ids) PrintId(t, i);
    for (const MemoryBreakdown& b : breakdowns) PrintBreakdown(t, b, limit);
  }
  if (repeat > 1) {
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    std::fprintf(stderr, "median %.3f ms of %zu run(s)\n", ms[ms.size() / 2], ms.size());
  }
  return 0;
}

}  // namespace tracetable::cli
