// tt_xprof_layout: the XProf-layout ablation behind bench/run.
//
//   tt_xprof_layout TABLE --scratch DIR --windows FILE [--repeat N]
//
// XProf's trace store keeps one key space per zoom level, key
// `level | timestamp | serial`, with no resource in the key: an event sits at
// the coarsest level whose resolution it reaches (dur >= resolution), and a
// window is answered by reading the key range of each level from the coarsest
// down to the query's level, dropping the other resources' events after
// reading them. tracetable keys by track first (format/keys.h). This tool
// copies the events of TABLE into DIR in XProf's order, with the same levels
// (format/levels.h: the level is DurationClass(dur)), so the two differ only
// in key order, and then runs the same windows on both.
//
// DIR is a scratch LevelDB, rebuilt when it was made from another table. Its
// values are one compact record per event (varints; the ts is in the key),
// smaller than XProf's TraceEvent protos, which favours the XProf side. Both
// databases use the table builder's LevelDB options and are fully compacted.
//
// FILE has bench-queries' format: "start_us end_us resolution_us [pid[:tid]]".
// stdout: first {"scratch": {...}} (events, bytes on disk, build seconds, 0
// when reused), then per window and repetition
//   {"i", "r", "level", "tt_us", "tt_keys", "tt_bytes", "tt_items",
//    "xp_us", "xp_keys", "xp_bytes", "xp_items"}.
// keys = LevelDB entries read (tracetable: tiles; XProf: events), bytes =
// value bytes returned by the iterators, counted the same way on both sides
// (store/table.h ReadStats). Latency is the query alone (QueryWindow for
// tracetable, scan + decode + filter for XProf), without answer text.
// tracetable also reads its summary tiles and returns summaries; the XProf
// layout has no summaries and returns only the events of the levels read.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "format/keys.h"
#include "format/levels.h"
#include "format/time.h"
#include "format/varint.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/options.h"
#include "leveldb/write_batch.h"
#include "query/track_filter.h"
#include "query/window.h"
#include "store/table.h"

namespace tracetable {
namespace {

// The scratch database's own record: which table it was made from, and the
// largest duration per level (a window reads each level from start - that).
constexpr char kSourceKey[] = "\xff" "source";

struct XEvent {
  uint32_t track = 0;
  TileRow row;
};

std::string EncodeRecord(uint32_t track, const TileRow& r) {
  std::string v;
  AppendVarint(&v, track);
  AppendVarint(&v, static_cast<uint64_t>(r.kind));
  AppendVarint(&v, r.lane);
  AppendVarint(&v, static_cast<uint64_t>(r.dur));
  AppendVarint(&v, r.name);
  AppendVarint(&v, r.cat);
  AppendVarint(&v, r.flags);
  AppendVarint(&v, r.flow_id);
  AppendVarint(&v, r.flow_out);
  AppendVarint(&v, r.flow_in);
  AppendVarint(&v, r.id);
  if (r.kind == EventKind::kCounter) v.append(reinterpret_cast<const char*>(&r.value), sizeof r.value);
  return v;
}

bool DecodeRecord(std::string_view v, int64_t ts, XEvent* e) {
  size_t pos = 0;
  uint64_t f[11];
  for (uint64_t& x : f) {
    if (!ReadVarint(v, &pos, &x)) return false;
  }
  e->track = static_cast<uint32_t>(f[0]);
  TileRow& r = e->row;
  r = TileRow();
  r.kind = static_cast<EventKind>(f[1]);
  r.lane = static_cast<uint32_t>(f[2]);
  r.ts = ts;
  r.dur = static_cast<int64_t>(f[3]);
  r.name = static_cast<uint32_t>(f[4]);
  r.cat = static_cast<uint32_t>(f[5]);
  r.flags = static_cast<uint32_t>(f[6]);
  r.flow_id = static_cast<uint32_t>(f[7]);
  r.flow_out = static_cast<uint32_t>(f[8]);
  r.flow_in = static_cast<uint32_t>(f[9]);
  r.id = f[10];
  if (r.kind == EventKind::kCounter) {
    if (v.size() - pos != sizeof r.value) return false;
    std::memcpy(&r.value, v.data() + pos, sizeof r.value);
  }
  return true;
}

std::string XKey(int level, uint64_t ts_offset, uint64_t serial) {
  std::string k;
  k.push_back(static_cast<char>(level));
  PutBigEndian64(&k, ts_offset);
  PutBigEndian64(&k, serial);
  return k;
}

leveldb::Options ScratchOptions(leveldb::Cache* cache) {
  // The table builder's options (store/table_builder.cc) and Table::Open's
  // cache, so the layouts differ only in key order.
  leveldb::Options o;
  o.create_if_missing = true;
  o.compression = leveldb::kSnappyCompression;
  o.write_buffer_size = 32 << 20;
  o.max_file_size = 64 << 20;
  o.block_size = 32 << 10;
  o.block_cache = cache;
  return o;
}

// A re-ingest of the same input gives the same table; anything else (another
// input, another format) changes its sorted tables' size or its metadata.
// (Log and manifest files change at every open, so they do not count.)
uint64_t SortedTableBytes(const std::string& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".ldb") bytes += entry.file_size(ec);
  }
  return bytes;
}

std::string Fingerprint(const Table& t) {
  return absl::StrCat(std::filesystem::absolute(t.path()).string(), " ", SortedTableBytes(t.path()), " ",
                      t.meta().num_events(), " ", t.meta().min_ts(), " ", t.meta().max_end(), " ",
                      t.meta().num_levels());
}

struct Scratch {
  std::unique_ptr<leveldb::Cache> cache;
  std::unique_ptr<leveldb::DB> db;
  std::vector<int64_t> max_dur;  // per level
  uint64_t events = 0;
  double build_s = 0;
};

absl::Status OpenDb(const std::string& dir, Scratch* s) {
  leveldb::DB* db = nullptr;
  leveldb::Status st = leveldb::DB::Open(ScratchOptions(s->cache.get()), dir, &db);
  if (!st.ok()) return absl::InternalError(absl::StrCat(dir, ": ", st.ToString()));
  s->db.reset(db);
  return absl::OkStatus();
}

bool ParseSource(const std::string& value, const std::string& fingerprint, Scratch* s) {
  std::istringstream in(value);
  std::string line;
  if (!std::getline(in, line) || line != fingerprint) return false;
  in >> s->events;
  int64_t d;
  s->max_dur.clear();
  while (in >> d) s->max_dur.push_back(d);
  return true;
}

// Reads every event of `table` track by track (a resolution-0 window over
// the whole span returns each stored event once) and writes it in XProf's
// key order. Memory is bounded by the largest track, not the table.
absl::Status Build(const Table& table, const std::string& dir, Scratch* s) {
  const auto t0 = std::chrono::steady_clock::now();
  const int num_levels = static_cast<int>(table.meta().num_levels());
  s->max_dur.assign(num_levels, 0);
  s->events = 0;
  leveldb::WriteBatch batch;
  auto flush = [&]() -> absl::Status {
    leveldb::Status st = s->db->Write(leveldb::WriteOptions(), &batch);
    batch.Clear();
    return st.ok() ? absl::OkStatus() : absl::InternalError(st.ToString());
  };
  for (int track = 0; track < table.resources().tracks_size(); ++track) {
    WindowRequest req;
    req.start = table.meta().min_ts();
    req.end = table.meta().max_end();
    req.tracks = {static_cast<uint32_t>(track)};
    absl::StatusOr<WindowResult> all = QueryWindow(table, req);
    if (!all.ok()) return all.status();
    for (const WindowItem& item : all->items) {
      const int level = DurationClass(item.row.dur, num_levels);
      s->max_dur[level] = std::max(s->max_dur[level], item.row.dur);
      const uint64_t offset = static_cast<uint64_t>(item.row.ts - table.meta().min_ts());
      batch.Put(XKey(level, offset, s->events++), EncodeRecord(item.track, item.row));
      if (batch.ApproximateSize() > (8 << 20)) {
        if (absl::Status st = flush(); !st.ok()) return st;
      }
    }
  }
  std::string source = Fingerprint(table) + "\n" + std::to_string(s->events);
  for (int64_t d : s->max_dur) absl::StrAppend(&source, " ", d);
  batch.Put(kSourceKey, source);
  if (absl::Status st = flush(); !st.ok()) return st;
  s->db->CompactRange(nullptr, nullptr);
  s->build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return absl::OkStatus();
}

absl::Status OpenOrBuild(const Table& table, const std::string& dir, Scratch* s) {
  s->cache.reset(leveldb::NewLRUCache(Table::Options().cache_bytes));
  const std::string fingerprint = Fingerprint(table);
  if (std::filesystem::exists(std::filesystem::path(dir) / "CURRENT")) {
    if (absl::Status st = OpenDb(dir, s); !st.ok()) return st;
    std::string value;
    if (s->db->Get(leveldb::ReadOptions(), kSourceKey, &value).ok() &&
        ParseSource(value, fingerprint, s) &&
        s->max_dur.size() == table.meta().num_levels()) {
      return absl::OkStatus();
    }
    s->db.reset();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (absl::Status st = OpenDb(dir, s); !st.ok()) return st;
  return Build(table, dir, s);
}

struct XResult {
  uint64_t keys = 0, bytes = 0;
  std::vector<XEvent> items;
};

// XProf's read: levels from the coarsest down to the query's, each as one
// range scan of [start - max_dur(level), end], filtered by track afterwards.
absl::Status XProfWindow(const Table& table, const Scratch& s, const WindowRequest& req,
                         const absl::flat_hash_set<uint32_t>& tracks, XResult* out) {
  const int num_levels = static_cast<int>(table.meta().num_levels());
  const int query_level = LevelForResolution(req.resolution, num_levels);
  const int64_t base = table.meta().min_ts();
  auto offset = [base](int64_t t) { return t <= base ? uint64_t{0} : static_cast<uint64_t>(t - base); };
  std::unique_ptr<leveldb::Iterator> it(s.db->NewIterator(leveldb::ReadOptions()));
  for (int level = num_levels - 1; level >= query_level; --level) {
    const std::string end = XKey(level, offset(req.end), UINT64_MAX);
    for (it->Seek(XKey(level, offset(req.start - s.max_dur[level]), 0));
         it->Valid() && it->key().compare(end) <= 0; it->Next()) {
      const leveldb::Slice k = it->key();
      const leveldb::Slice v = it->value();
      ++out->keys;
      out->bytes += v.size();
      XEvent e;
      if (k.size() != 17 ||
          !DecodeRecord(std::string_view(v.data(), v.size()),
                        base + static_cast<int64_t>(GetBigEndian64(k.data() + 1)), &e)) {
        return absl::DataLossError("scratch database: malformed record");
      }
      if (!tracks.empty() && !tracks.contains(e.track)) continue;
      if (e.row.ts <= req.end && e.row.ts + e.row.dur >= req.start) out->items.push_back(e);
    }
  }
  if (!it->status().ok()) return absl::DataLossError(it->status().ToString());
  return absl::OkStatus();
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "tt_xprof_layout: %s\n", message.c_str());
  return 1;
}

int Main(int argc, char** argv) {
  std::string table_path, scratch, windows;
  int repeat = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--scratch" || a == "--windows" || a == "--repeat") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--scratch") scratch = v;
      if (a == "--windows") windows = v;
      if (a == "--repeat") repeat = std::max(1, std::atoi(v.c_str()));
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: tt_xprof_layout TABLE --scratch DIR --windows FILE [--repeat N]\n");
      return 0;
    } else if (table_path.empty() && a[0] != '-') {
      table_path = a;
    } else {
      return Fail("unexpected argument " + a + " (see --help)");
    }
  }
  if (table_path.empty() || scratch.empty() || windows.empty()) {
    return Fail("usage: tt_xprof_layout TABLE --scratch DIR --windows FILE [--repeat N]");
  }
  absl::StatusOr<std::unique_ptr<Table>> opened = Table::Open(table_path);
  if (!opened.ok()) return Fail(std::string(opened.status().message()));
  const Table& table = **opened;
  Scratch s;
  if (absl::Status st = OpenOrBuild(table, scratch, &s); !st.ok()) {
    return Fail(std::string(st.message()));
  }
  std::printf("{\"scratch\":{\"events\":%llu,\"disk_bytes\":%llu,\"build_s\":%.3f}}\n",
              static_cast<unsigned long long>(s.events),
              static_cast<unsigned long long>(cli::DirectoryBytes(scratch)), s.build_s);

  std::ifstream in(windows);
  if (!in) return Fail(windows + ": cannot read");
  std::string line;
  for (size_t i = 0; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string start_us, end_us, res_us, pid;
    if (!(fields >> start_us >> end_us >> res_us)) return Fail(windows + ": bad line: " + line);
    fields >> pid;
    WindowRequest req;
    absl::StatusOr<int64_t> start = cli::ParseTableTime(table, start_us, "start");
    absl::StatusOr<int64_t> end = cli::ParseTableTime(table, end_us, "end");
    absl::StatusOr<NsPs> res = ParseMicros(res_us);
    if (!start.ok() || !end.ok() || !res.ok() || res->ns < 0) return Fail(windows + ": bad line: " + line);
    req.start = *start;
    req.end = *end;
    req.resolution = res->ns * 1000 + res->ps;
    absl::flat_hash_set<uint32_t> track_set;
    if (!pid.empty()) {
      absl::StatusOr<std::vector<uint32_t>> tracks = SelectTracks(table, TrackFilter{{}, {pid}, {}});
      if (!tracks.ok()) return Fail(std::string(tracks.status().message()));
      req.tracks = *tracks;
      track_set.insert(tracks->begin(), tracks->end());
    }
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      absl::StatusOr<WindowResult> tt = QueryWindow(table, req);
      const double tt_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (!tt.ok()) return Fail(std::string(tt.status().message()));
      XResult xp;
      t0 = std::chrono::steady_clock::now();
      if (absl::Status st = XProfWindow(table, s, req, track_set, &xp); !st.ok()) {
        return Fail(std::string(st.message()));
      }
      const double xp_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      // Both layouts must agree on the slices a view at this resolution
      // shows exactly (query/window.h); otherwise the comparison is void.
      auto exact = [&](const TileRow& row) {
        return row.count <= 1 && row.kind == EventKind::kSlice && row.dur >= req.resolution;
      };
      const size_t tt_exact = std::count_if(tt->items.begin(), tt->items.end(),
                                            [&](const WindowItem& w) { return !w.summary && exact(w.row); });
      const size_t xp_exact = std::count_if(xp.items.begin(), xp.items.end(),
                                            [&](const XEvent& e) { return exact(e.row); });
      if (tt_exact != xp_exact) {
        return Fail(absl::StrCat(windows, ": line ", i + 1, ": tracetable returns ", tt_exact,
                                 " slices of dur >= resolution, the XProf layout ", xp_exact));
      }
      std::printf("{\"i\":%zu,\"r\":%d,\"level\":%d,\"tt_us\":%.1f,\"tt_keys\":%llu,\"tt_bytes\":%llu,"
                  "\"tt_items\":%zu,\"xp_us\":%.1f,\"xp_keys\":%llu,\"xp_bytes\":%llu,\"xp_items\":%zu}\n",
                  i, r, tt->level, tt_us, static_cast<unsigned long long>(tt->stats.tiles),
                  static_cast<unsigned long long>(tt->stats.bytes), tt->items.size(), xp_us,
                  static_cast<unsigned long long>(xp.keys), static_cast<unsigned long long>(xp.bytes),
                  xp.items.size());
    }
    ++i;
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tracetable

int main(int argc, char** argv) { return tracetable::Main(argc, argv); }
