#include "cli/run_info.h"

#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "format/json_text.h"
#include "format/time.h"
#include "store/output_claim.h"

namespace tracetable::cli {
namespace fs = std::filesystem;
namespace {

std::string Abs(const RunManifest& m, int64_t rel_ps) {
  return FormatMicros(static_cast<__int128>(m.origin_ns) * 1000 + rel_ps);
}

struct Totals {
  int64_t min_ts = 0, max_end = 0;
  uint64_t events = 0, bytes = 0;
};

Totals Sum(const RunManifest& m) {
  Totals t;
  bool any = false;
  for (const RunShardInfo& s : m.shards) {
    t.events += s.num_events;
    t.bytes += s.input_bytes;
    t.min_ts = any ? std::min(t.min_ts, s.min_ts) : s.min_ts;
    t.max_end = any ? std::max(t.max_end, s.max_end) : s.max_end;
    any = true;
  }
  return t;
}

std::string RunJson(const std::string& path, const RunManifest& m, uint64_t disk) {
  const Totals t = Sum(m);
  std::string out = "{\"run\":true,\"path\":";
  AppendJsonString(&out, path);
  absl::StrAppend(&out, ",\"run_format_version\":", m.format_version, ",\"run_id\":\"", m.run_id,
                  "\",\"generation\":", m.generation, ",\"origin_ns\":", m.origin_ns,
                  ",\"start_us\":", Abs(m, t.min_ts), ",\"end_us\":", Abs(m, t.max_end),
                  ",\"span_us\":", FormatMicros(t.max_end - t.min_ts), ",\"hosts\":", m.shards.size(),
                  ",\"events\":", t.events, ",\"bytes_on_disk\":", disk, ",\"shards\":[");
  for (size_t i = 0; i < m.shards.size(); ++i) {
    const RunShardInfo& s = m.shards[i];
    if (i) out += ",";
    out += "{\"host\":";
    AppendJsonString(&out, s.host);
    out += ",\"dir\":";
    AppendJsonString(&out, s.dir);
    absl::StrAppend(&out, ",\"table_id\":\"", s.table_id, "\",\"start_us\":", Abs(m, s.min_ts),
                    ",\"end_us\":", Abs(m, s.max_end), ",\"events\":", s.num_events,
                    ",\"event_ids\":", s.event_ids, ",\"tracks\":", s.num_tracks,
                    ",\"processes\":", s.num_processes, ",\"levels\":", s.num_levels, ",\"input\":");
    AppendJsonString(&out, s.input_path);
    absl::StrAppend(&out, ",\"input_bytes\":", s.input_bytes, ",\"clock_shift_ns\":", s.clock_shift_ns, "}");
  }
  out += "]}\n";
  return out;
}

void PrintRunText(const std::string& path, const RunManifest& m, uint64_t disk) {
  const Totals t = Sum(m);
  std::cout << path << " (run of " << m.shards.size() << " hosts, run format " << m.format_version
            << ", id " << m.run_id << ", generation " << m.generation << ")\n"
            << "  span      " << Abs(m, t.min_ts) << " .. " << Abs(m, t.max_end) << " us ("
            << FormatMicros(t.max_end - t.min_ts) << " us)\n"
            << "  origin    " << m.origin_ns << " ns (relative 0 of every shard)\n"
            << "  events    " << t.events << "\n"
            << "  inputs    " << HumanBytes(t.bytes) << "\n"
            << "  size      " << HumanBytes(disk) << "\n";
  for (const RunShardInfo& s : m.shards) {
    std::cout << "  host      " << s.host << ": " << s.num_events << " events, " << s.num_tracks << " tracks, "
              << Abs(m, s.min_ts) << " .. " << Abs(m, s.max_end) << " us, " << s.dir << " <- " << s.input_path;
    if (s.clock_shift_ns != 0) std::cout << " (clock shifted by " << s.clock_shift_ns << " ns)";
    std::cout << "\n";
  }
}

// Shard folders not in the manifest: an ingest still writing, or one killed
// between renaming its shard and entering it. Not errors of the run.
void PrintUnlisted(const std::string& path, const RunManifest& m) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(path) / kRunShardsDir, ec)) {
    const std::string dir = absl::StrCat(kRunShardsDir, "/", e.path().filename().string());
    bool listed = false;
    for (const RunShardInfo& s : m.shards) listed = listed || s.dir == dir;
    if (listed) {
      for (const Leftover& l : FindLeftovers(e.path().string())) {
        std::cout << "leftover: " << l.path << " (pid " << l.pid
                  << (l.writing ? ", an ingest still writing)\n" : ", an ingest that was killed)\n");
      }
    } else if (dir.find(".tmp-") == std::string::npos) {
      std::cout << "unlisted: " << dir << " (not in the manifest: an ingest of it still running, or killed "
                << "before entering it)\n";
    }
  }
}

}  // namespace

int PrintRunInfo(const std::string& path, bool json) {
  absl::StatusOr<RunManifest> m = ReadRunManifest(path);
  if (!m.ok()) return Fail("info", m.status().message());
  const uint64_t disk = DirectoryBytes(path);
  if (json) {
    std::cout << RunJson(path, *m, disk);
  } else {
    PrintRunText(path, *m, disk);
  }
  return 0;
}

std::string CompareShard(const RunShardInfo& e, int64_t run_origin_ns, const Table& shard) {
  const proto::TableMeta& t = shard.meta();
  std::string diff;
  auto check = [&](const char* what, auto listed, auto actual) {
    if (listed != actual) absl::StrAppend(&diff, diff.empty() ? "" : "; ", what, " ", actual, ", manifest says ", listed);
  };
  check("table_id", e.table_id, t.table_id());
  check("origin_ns", run_origin_ns, t.origin_ns());
  check("min_ts", e.min_ts, t.min_ts());
  check("max_end", e.max_end, t.max_end());
  check("events", e.num_events, t.num_events());
  check("event_ids", e.event_ids, t.event_ids());
  check("tracks", e.num_tracks, static_cast<uint32_t>(shard.resources().tracks_size()));
  check("processes", e.num_processes, static_cast<uint32_t>(shard.resources().processes_size()));
  check("levels", e.num_levels, t.num_levels());
  return diff;
}

int VerifyRun(const std::string& path, const std::function<uint64_t(const Table&)>& verify_table) {
  absl::StatusOr<RunManifest> m = ReadRunManifest(path);
  if (!m.ok()) {
    std::cout << "FAILED: " << m.status().message() << "\n";
    return 1;
  }
  PrintUnlisted(path, *m);
  int bad = 0;
  uint64_t events = 0;
  for (const RunShardInfo& s : m->shards) {
    const std::string shard_path = (fs::path(path) / s.dir).string();
    std::cout << "host " << s.host << " (" << s.dir << "): ";
    std::error_code ec;
    if (!fs::exists(shard_path, ec)) {
      std::cout << "error: shard missing\n";
      ++bad;
      continue;
    }
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(shard_path);
    if (!t.ok()) {
      std::cout << "error: " << t.status().message() << "\n";
      ++bad;
      continue;
    }
    if (const std::string diff = CompareShard(s, m->origin_ns, **t); !diff.empty()) {
      std::cout << "error: shard does not match the manifest: " << diff << "\n";
      ++bad;
      continue;
    }
    if (verify_table(**t) != 0) ++bad;
    events += s.num_events;
  }
  std::cout << (bad ? "FAILED: " : "OK: ") << "run of " << m->shards.size() << " hosts, " << events
            << " events in sound shards, " << bad << " bad shard(s)\n";
  return bad ? 1 : 0;
}

}  // namespace tracetable::cli
