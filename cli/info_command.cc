// tracetable info TABLE [--json]
#include <cstdio>
#include <iostream>
#include <map>

#include "leveldb/iterator.h"
#include "format/args_codec.h"
#include "format/keys.h"
#include "format/tile_codec.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "cli/run_info.h"
#include "query/memory_json.h"
#include "format/levels.h"
#include "format/time.h"
#include "format/json_text.h"
#include "query/input_fields.h"
#include "query/trace_json.h"

namespace tracetable::cli {
namespace po = boost::program_options;
namespace {

// Track ids of each process, in id order: one pass, where asking every
// process for its tracks is processes x tracks (minutes at 200k processes).
std::vector<std::vector<uint32_t>> TracksByProcess(const proto::ResourceTable& r) {
  std::vector<std::vector<uint32_t>> out(r.processes_size());
  for (const proto::Track& tr : r.tracks()) out[tr.process()].push_back(tr.id());
  return out;
}

std::string InfoJson(const Table& t, uint64_t disk) {
  const proto::TableMeta& m = t.meta();
  std::string out = "{";
  absl::StrAppend(&out, "\"path\":");
  AppendJsonString(&out, t.path());
  absl::StrAppend(&out, ",\"format_version\":", m.format_version(),
                  ",\"start_us\":", AbsoluteMicros(t, m.min_ts()),
                  ",\"end_us\":", AbsoluteMicros(t, m.max_end()),
                  ",\"span_us\":", FormatMicros(m.max_end() - m.min_ts()),
                  ",\"events\":", m.num_events(), ",\"levels\":", m.num_levels(),
                  ",\"max_depth\":", m.max_depth(), ",\"strings\":", m.num_strings(),
                  ",\"bytes_on_disk\":", disk,
                  ",\"bytes_per_event\":", m.num_events() ? double(disk) / m.num_events() : 0.0);
  out += ",\"memory\":[";
  for (int i = 0; i < m.memory().ids_size(); ++i) {
    if (i) out += ",";
    AppendMemoryIdJson(t, static_cast<uint32_t>(i), &out);
  }
  out += "]";
  if (m.has_search_index()) {
    absl::StrAppend(&out, ",\"search_index\":{\"postings\":", m.search_index().postings(),
                    ",\"chunks\":", m.search_index().chunks(), ",\"groups\":", m.search_index().groups(), ",\"bytes\":", m.search_index().bytes(), "}");
  } else {
    out += ",\"search_index\":null";
  }
  out += ",\"phase_counts\":{";
  bool first = true;
  for (const auto& [k, v] : m.phase_counts()) {
    absl::StrAppend(&out, first ? "" : ",", "\"", k, "\":", v);
    first = false;
  }
  out += "},\"skipped\":{";
  first = true;
  for (const auto& [k, v] : m.skipped_counts()) {
    if (!first) out += ",";
    AppendJsonString(&out, k);
    absl::StrAppend(&out, ":", v);
    first = false;
  }
  out += "},\"warnings\":[";
  for (int i = 0; i < m.warnings_size(); ++i) {
    if (i) out += ",";
    AppendJsonString(&out, m.warnings(i));
  }
  out += "],\"inputs\":";
  AppendInputsJson(t, &out);
  out += ",\"hosts\":[";
  std::vector<std::string> hosts;
  for (const proto::InputInfo& in : m.inputs()) {
    if (!in.host().empty() && std::find(hosts.begin(), hosts.end(), in.host()) == hosts.end()) {
      hosts.push_back(in.host());
    }
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (i) out += ",";
    AppendJsonString(&out, hosts[i]);
  }
  out += "],\"processes\":[";
  const proto::ResourceTable& r = t.resources();
  const std::vector<std::vector<uint32_t>> by_process = TracksByProcess(r);
  for (int pi = 0; pi < r.processes_size(); ++pi) {
    const proto::Process& p = r.processes(pi);
    if (pi) out += ",";
    out += "{\"pid\":";
    AppendPid(t, pi, &out);
    out += ",\"name\":";
    AppendJsonString(&out, p.name());
    out += ",\"host\":";
    AppendJsonString(&out, p.host());
    if (p.global()) out += ",\"global\":true";
    out += ",\"tracks\":[";
    bool first_track = true;
    for (uint32_t id : by_process[pi]) {
      const proto::Track& tr = r.tracks(id);
      if (!first_track) out += ",";
      first_track = false;
      absl::StrAppend(&out, "{\"id\":", tr.id(), ",\"kind\":\"", TrackKindName(tr), "\",\"tid\":");
      AppendTid(t, tr.id(), &out);
      out += ",\"name\":";
      AppendJsonString(&out, tr.kind() == proto::Track::COUNTER
                                 ? absl::StrCat(tr.name(), ".", tr.series()) : tr.name());
      absl::StrAppend(&out, ",\"events\":", tr.num_events(), ",\"max_depth\":", tr.max_depth(), "}");
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

void PrintText(const Table& t, uint64_t disk) {
  const proto::TableMeta& m = t.meta();
  std::cout << t.path() << " (format " << m.format_version() << ", " << m.created_by() << ")\n"
            << "  span      " << AbsoluteMicros(t, m.min_ts()) << " .. " << AbsoluteMicros(t, m.max_end())
            << " us (" << FormatMicros(m.max_end() - m.min_ts()) << " us)\n"
            << "  events    " << m.num_events() << "\n"
            << "  tracks    " << t.resources().tracks_size() << " in " << t.resources().processes_size()
            << " processes, max depth " << m.max_depth() << "\n"
            << "  levels    " << m.num_levels() << " (resolutions 0, 1 ns, 8 ns, ... "
            << FormatMicros(Resolution(m.num_levels() - 1)) << " us)\n"
            << "  size      " << HumanBytes(disk) << " ("
            << (m.num_events() ? double(disk) / m.num_events() : 0) << " bytes/event)\n"
            << "  strings   " << m.num_strings() << "\n";
  if (m.has_search_index()) {
    const proto::SearchIndexInfo& si = m.search_index();
    std::cout << "  search    index of " << si.postings() << " (name, tile) postings in " << si.chunks()
              << " chunks and " << si.groups() << " groups of rare names, " << HumanBytes(si.bytes()) << " before compression ("
              << (m.num_events() ? double(si.bytes()) / m.num_events() : 0) << " bytes/event)\n";
  } else {
    std::cout << "  search    no index (written before it existed): search scans the events\n";
  }
  if (m.has_stats_index()) {
    const proto::StatsIndexInfo& st = m.stats_index();
    std::cout << "  stats     aggregates in " << st.buckets() << " (track, bucket) records, " << st.levels()
              << " levels from buckets of 2^" << st.bucket_log2() << " ps, " << HumanBytes(st.bytes())
              << " before compression (" << (m.num_events() ? double(st.bytes()) / m.num_events() : 0)
              << " bytes/event)\n";
  } else {
    std::cout << "  stats     no aggregates (ingest --stats-bucket-events N writes them): range statistics read the events\n";
  }
  if (m.has_flow_index()) {
    const proto::FlowIndexInfo& fi = m.flow_index();
    std::cout << "  flows     index of " << fi.flows() << " flow ids, " << fi.postings() << " (flow, tile) postings, "
              << HumanBytes(fi.bytes()) << " before compression\n";
  } else {
    std::cout << "  flows     no index (written before it existed): far ends of flows cannot be looked up\n";
  }
  for (const proto::MemoryId& id : m.memory().ids()) {
    std::cout << "  memory    " << (id.host().empty() ? "" : id.host() + " ") << id.name() << " (" << id.source()
              << "): " << id.events() << " events, peak in use " << id.peak_in_use() << " B at "
              << AbsoluteMicros(t, id.peak_ts()) << " us; unpaired: " << id.frees_without_alloc()
              << " frees without allocation, " << id.allocs_never_freed() << " never freed, "
              << id.allocs_at_live_addr() << " at a live address, " << id.events_without_addr()
              << " without address\n";
  }
  std::cout << "  phases   ";
  for (const auto& [k, v] : m.phase_counts()) std::cout << " " << k << "=" << v;
  std::cout << "\n";
  for (const proto::InputInfo& in : m.inputs()) {
    std::cout << "  input     " << in.path() << (in.host().empty() ? "" : " host=" + in.host())
              << " " << HumanBytes(in.bytes()) << ", " << in.events() << " events\n";
    std::map<std::string, std::string> fields(in.fields().begin(), in.fields().end());
    for (const auto& [k, v] : fields) {
      // Long values (systemTraceEvents can be megabytes) are cut for reading;
      // --json has them whole.
      constexpr size_t kShown = 200;
      std::cout << "    field   " << k << " = " << v.substr(0, kShown)
                << (v.size() > kShown ? absl::StrCat("... (", v.size(), " bytes)") : "") << "\n";
    }
  }
  for (const auto& [k, v] : m.skipped_counts()) std::cout << "  skipped   " << v << " x " << k << "\n";
  for (const std::string& w : m.warnings()) std::cout << "  warning   " << w << "\n";
  const proto::ResourceTable& r = t.resources();
  const std::vector<std::vector<uint32_t>> by_process = TracksByProcess(r);
  for (int pi = 0; pi < r.processes_size(); ++pi) {
    const proto::Process& p = r.processes(pi);
    if (p.global()) {
      std::cout << "  global  (no process; the input's \"s\":\"g\" instants)" << (p.host().empty() ? "" : " host=" + p.host()) << "\n";
    } else {
      std::string pid;
      AppendPid(t, pi, &pid);
      std::cout << "  process " << pid << " " << p.name() << "\n";
    }
    for (uint32_t id : by_process[pi]) {
      const proto::Track& tr = r.tracks(id);
      std::string tid;
      AppendTid(t, tr.id(), &tid);
      std::cout << "    " << absl::StrFormat("%-8s", TrackKindName(tr)) << " " << tid << " "
                << (tr.kind() == proto::Track::COUNTER ? tr.name() + "." + tr.series() : tr.name())
                << ": " << tr.num_events() << " events, depth " << tr.max_depth() << "\n";
    }
  }
}

// Tiles and bytes per section and level: reads every key (a full scan).
void PrintLevels(const Table& t) {
  struct Acc {
    uint64_t tiles = 0, bytes = 0, rows = 0, single = 0;
  };
  std::map<std::pair<char, int>, Acc> acc;
  uint64_t args = 0, args_bytes = 0;
  std::unique_ptr<leveldb::Iterator> it = t.NewIterator();
  std::vector<TileRow> rows;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    TileKey k;
    std::string_view key(it->key().data(), it->key().size());
    if (DecodeTileKey(key, &k)) {
      Acc& a = acc[{static_cast<char>(k.section), k.level}];
      ++a.tiles;
      a.bytes += it->key().size() + it->value().size();
      rows.clear();
      if (DecodeTile(std::string_view(it->value().data(), it->value().size()), 0, &rows).ok()) {
        a.rows += rows.size();
        for (const TileRow& r : rows) a.single += r.count == 1;
      }
    } else if (!key.empty() && key[0] == kArgsPrefix) {
      std::vector<ArgsEntry> entries;
      if (DecodeArgsBlock(std::string_view(it->value().data(), it->value().size()), &entries).ok()) {
        args += entries.size();
      }
      args_bytes += it->key().size() + it->value().size();
    }
  }
  std::cout << "  section level  tiles      rows    single       bytes (uncompressed key+value)\n";
  for (const auto& [k, a] : acc) {
    std::printf("  %-7s %5d %9llu %9llu %9llu %11llu\n", k.first == 'E' ? "events" : "summary", k.second,
                static_cast<unsigned long long>(a.tiles), static_cast<unsigned long long>(a.rows),
                static_cast<unsigned long long>(a.single),
                static_cast<unsigned long long>(a.bytes));
  }
  std::printf("  args            %9llu %9s %11llu\n", static_cast<unsigned long long>(args), "",
              static_cast<unsigned long long>(args_bytes));
}

}  // namespace

int InfoMain(int argc, char** argv) {
  po::options_description opts("usage: tracetable info TABLE|RUN [--json]\n\noptions");
  opts.add_options()("help,h", "show this help")("json", "print JSON instead of text")(
      "levels", "also count tiles, rows and bytes per level (reads the whole table)");
  std::vector<std::string> args;
  po::variables_map vm;
  if (auto exit = ParseCommandLine("info", argc, argv, opts, &args, 1, &vm)) return *exit;
  const std::string path = args.empty() ? "" : args[0];
  if (path.empty()) return Fail("info", "no table given (see --help)");
  if (IsRun(path)) return PrintRunInfo(path, vm.count("json") > 0);
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(path);
  if (!t.ok()) return Fail("info", t.status().message());
  const uint64_t disk = DirectoryBytes(path);
  if (vm.count("json")) {
    std::cout << InfoJson(**t, disk);
  } else {
    PrintText(**t, disk);
    if (vm.count("levels")) PrintLevels(**t);
  }
  return 0;
}

}  // namespace tracetable::cli
