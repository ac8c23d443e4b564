// tracetable verify TABLE: reads every record and checks it against the
// metadata. Exit 0 only if the whole table is sound.
#include <iostream>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/common.h"
#include "cli/run_info.h"
#include "format/args_codec.h"
#include "format/flow_id.h"
#include "format/keys.h"
#include "format/levels.h"
#include "format/search_group_codec.h"
#include "format/stats_codec.h"
#include "format/thread_time_codec.h"
#include "format/tile_codec.h"
#include "leveldb/iterator.h"
#include "store/output_claim.h"
#include "query/flow_ends.h"
#include "query/memory.h"
#include "store/table_format.h"

namespace tracetable::cli {
namespace po = boost::program_options;
namespace {

class Verifier {
 public:
  explicit Verifier(const Table& t)
      : t_(t), numeric_flows_(t.meta().format_version() >= kNumericFlowIdsVersion) {}

  int Run() {
    std::unique_ptr<leveldb::Iterator> it = t_.NewIterator();
    std::string prev;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string key = it->key().ToString();
      if (!prev.empty() && key <= prev) Error(key, "keys out of order");
      prev = key;
      CheckRecord(key, std::string_view(it->value().data(), it->value().size()));
    }
    if (!it->status().ok()) Error("", absl::StrCat("LevelDB: ", it->status().ToString()));
    CheckCounts();
    std::cout << (errors_ ? "FAILED: " : "OK: ") << tiles_ << " tiles, " << rows_
              << " stored events, " << args_ << " argument records, " << errors_ << " errors\n";
    return errors_ ? 1 : 0;
  }

 private:
  void Error(std::string_view key, std::string_view what) {
    if (++errors_ <= 50) {
      std::string printable;
      for (char c : key) absl::StrAppend(&printable, absl::Hex(static_cast<uint8_t>(c), absl::kZeroPad2));
      std::cout << "error: key " << printable << ": " << what << "\n";
    }
  }

  void CheckRecord(const std::string& key, std::string_view value) {
    if (key.empty()) return Error(key, "empty key");
    switch (key[0]) {
      case kTilePrefix:
        return CheckTile(key, value);
      case kArgsPrefix: {
        std::vector<ArgsEntry> entries;
        if (key.size() != 9) return Error(key, "arguments record with a malformed key");
        if (absl::Status s = DecodeArgsBlock(value, &entries); !s.ok()) {
          return Error(key, std::string(s.message()));
        }
        args_ += entries.size();
        return;
      }
      case kThreadTimePrefix: {
        std::vector<ThreadTimeEntry> entries;
        if (key.size() != 9) return Error(key, "thread time record with a malformed key");
        if (absl::Status s = DecodeThreadTimeBlock(value, &entries); !s.ok()) {
          return Error(key, std::string(s.message()));
        }
        thread_times_ += entries.size();
        return;
      }
      case kSearchTilesPrefix:
      case kSearchPrefix:
      case kSearchGroupPrefix:
        return CheckSearchIndex(key, value);
      case kFlowPrefix: {
        proto::FlowTiles block;
        if (key.size() != 5) return Error(key, "flow index record with a malformed key");
        if (absl::Status s = CheckFlowTiles(t_, value, &block); !s.ok()) return Error(key, std::string(s.message()));
        return;
      }
      case kStatsPrefix:
        return CheckStatsBucket(key, value);
      case kMemorySegmentPrefix: {
        if (key.size() != 9) return Error(key, "memory segment with a malformed key");
        const uint32_t id = GetBigEndian32(key.data() + 1), segment = GetBigEndian32(key.data() + 5);
        if (absl::Status s = CheckMemorySegment(t_, id, segment, value); !s.ok()) {
          return Error(key, std::string(s.message()));
        }
        ++memory_segments_;
        return;
      }
      case kStringPrefix:
      case 'M':
      case 'R':
        return;  // parsed by Table::Open already
      default:
        return Error(key, "unknown key prefix");
    }
  }

  // Range statistics aggregates: a key on the table's grid, a value that
  // decodes and checks (format/stats_codec.h), of its track's kind.
  void CheckStatsBucket(const std::string& key, std::string_view value) {
    if (!t_.meta().has_stats_index()) return Error(key, "stats bucket in a table without a stats index");
    if (key.size() != 14) return Error(key, "stats bucket with a malformed key");
    const uint32_t track = GetBigEndian32(key.data() + 1);
    const uint32_t level = static_cast<uint8_t>(key[5]);
    if (track >= static_cast<uint32_t>(t_.resources().tracks_size())) return Error(key, "stats bucket of a track that does not exist");
    if (level >= t_.meta().stats_index().levels()) return Error(key, "stats bucket of a level that does not exist");
    absl::StatusOr<StatsBucketData> d = DecodeStatsBucket(value, t_.num_strings());
    if (!d.ok()) return Error(key, std::string(d.status().message()));
    const bool counter = t_.resources().tracks(static_cast<int>(track)).kind() == proto::Track::COUNTER;
    if (counter ? !d->names.empty() : d->samples != 0) return Error(key, "stats bucket of the wrong kind for its track");
  }

  void CheckTile(const std::string& key, std::string_view value) {
    TileKey tk;
    if (!DecodeTileKey(key, &tk)) return Error(key, "malformed tile key");
    ++tiles_;
    if (tk.track >= static_cast<uint32_t>(t_.resources().tracks_size())) {
      return Error(key, "tile of a track that does not exist");
    }
    if (tk.level >= t_.meta().num_levels()) return Error(key, "tile of a level that does not exist");
    if (tk.section == TileSection::kSummaries && !HasSummaryTiles(tk.level)) {
      return Error(key, "summary tile of a level that keeps none");
    }
    std::vector<TileRow> rows;
    const int64_t start = t_.TileStart(tk);
    absl::Status s = DecodeTile(value, start, &rows);
    if (!s.ok()) return Error(key, std::string(s.message()));
    if (rows.empty()) return Error(key, "empty tile");
    if (rows.front().ts != start) return Error(key, "tile key does not match its first row");
    // Within one (track, section, level), tiles follow each other in time.
    const std::string run = key.substr(0, 7);
    if (run != last_run_) {
      last_run_ = run;
      last_ts_ = INT64_MIN;
    }
    if (start < last_ts_) return Error(key, "tile starts before the previous tile ends");
    for (const TileRow& r : rows) {
      if (r.ts < start) return Error(key, "row before its tile's start");
      last_ts_ = std::max(last_ts_, r.ts);
      if (r.dur < 0) return Error(key, "negative duration");
      if (r.name >= t_.num_strings() || r.cat >= t_.num_strings()) return Error(key, "string id out of range");
      for (uint32_t flow : {r.flow_id, r.flow_out, r.flow_in}) {
        if (IsNumericFlowId(flow) ? !numeric_flows_ : flow >= t_.num_strings()) {
          return Error(key, "flow id out of range");
        }
      }
      // Events are stored at their duration class or higher (where they are
      // alone in their summary group), never lower.
      if (tk.section == TileSection::kEvents &&
          DurationClass(r.dur, t_.meta().num_levels()) > tk.level &&
          r.kind == EventKind::kSlice) {
        return Error(key, "event stored below its duration class");
      }
      if (tk.section == TileSection::kSummaries && r.count < 2 &&
          t_.resources().tracks(tk.track).kind() != proto::Track::COUNTER) {
        return Error(key, "summary row of fewer than two events");
      }
    }
    if (tk.section == TileSection::kEvents) {
      per_track_[tk.track] += rows.size();
      rows_ += rows.size();
      for (const TileRow& r : rows) rows_with_thread_time_ += (r.flags & kFlagHasThreadTime) != 0;
    }
  }

  void CheckSearchIndex(const std::string& key, std::string_view value) {
    if (!t_.meta().has_search_index()) return Error(key, "search index record, but the metadata has no index");
    if (key[0] == kSearchTilesPrefix) {
      proto::SearchTiles d;
      if (key.size() != 5 || !d.ParseFromArray(value.data(), static_cast<int>(value.size())) ||
          d.track_size() != d.start_delta_size() || d.level_size() != d.start_delta_size() ||
          d.reach_size() != d.start_delta_size() || d.last_size() != d.start_delta_size()) {
        return Error(key, "search directory block does not parse");
      }
      if (GetBigEndian32(key.data() + 1) != search_tiles_ >> kSearchTilesBlockShift) {
        return Error(key, "search directory block out of sequence");
      }
      search_tiles_ += d.start_delta_size();
      return;
    }
    if (key[0] == kSearchGroupPrefix) return CheckSearchGroup(key, value);
    proto::SearchPostings c;
    if (key.size() != 9 || !c.ParseFromArray(value.data(), static_cast<int>(value.size())) ||
        c.carried() >= static_cast<uint32_t>(c.rank_delta_size())) {
      return Error(key, "search postings chunk does not parse");
    }
    uint64_t rank = 0;
    for (int i = 0; i < c.rank_delta_size(); ++i) {
      if (i > 0 && c.rank_delta(i) == 0) return Error(key, "search postings out of order");
      rank += c.rank_delta(i);
      if (i == static_cast<int>(c.carried()) && rank != GetBigEndian32(key.data() + 5)) {
        return Error(key, "search postings chunk key does not match its first posting");
      }
    }
    max_rank_ = std::max(max_rank_, rank);
    ++search_chunks_;
    search_postings_ += c.rank_delta_size() - c.carried();
    chunked_names_.insert(GetBigEndian32(key.data() + 1));
  }

  // Keys "P" come after every "N" key: a grouped name must have none.
  void CheckSearchGroup(const std::string& key, std::string_view value) {
    if (key.size() != 5) return Error(key, "search name group with a malformed key");
    std::vector<SearchGroupEntry> entries;
    if (absl::Status s = DecodeSearchNameGroup(GetBigEndian32(key.data() + 1), value, &entries); !s.ok()) {
      return Error(key, std::string(s.message()));
    }
    if (entries.empty()) return Error(key, "empty search name group");
    for (const SearchGroupEntry& e : entries) {
      if (chunked_names_.contains(e.name)) return Error(key, absl::StrCat("name ", e.name, " has chunks too"));
      max_rank_ = std::max<uint64_t>(max_rank_, e.ranks.back());
      search_postings_ += e.ranks.size();
    }
    ++search_groups_;
  }

  void CheckSearchCounts() {
    if (!t_.meta().has_search_index()) return;
    const proto::SearchIndexInfo& si = t_.meta().search_index();
    if (search_tiles_ != si.tiles() || search_chunks_ != si.chunks() || search_groups_ != si.groups() ||
        search_postings_ != si.postings()) {
      Error("", absl::StrCat("search index holds ", search_tiles_, " tiles, ", search_chunks_, " chunks, ",
                             search_groups_, " name groups, ", search_postings_, " postings; metadata says ",
                             si.tiles(), ", ", si.chunks(), ", ", si.groups(), ", ", si.postings()));
    }
    if (search_postings_ > 0 && max_rank_ >= search_tiles_) Error("", "search posting past the directory");
  }

  void CheckCounts() {
    CheckSearchCounts();
    if (thread_times_ != rows_with_thread_time_) {
      Error("", absl::StrCat(thread_times_, " thread time entries, ", rows_with_thread_time_,
                             " events whose row says they have one"));
    }
    uint64_t segments = 0;
    for (const proto::MemoryId& m : t_.meta().memory().ids()) segments += m.segment_seq_size();
    if (segments != memory_segments_) {
      Error("", absl::StrCat(memory_segments_, " memory segments, metadata lists ", segments));
    }
    uint64_t total = 0;
    for (const proto::Track& tr : t_.resources().tracks()) {
      const uint64_t got = per_track_[tr.id()];
      total += got;
      if (got != tr.num_events()) {
        Error("", absl::StrCat("track ", tr.id(), ": ", got, " events in tiles, resource table says ",
                               tr.num_events()));
      }
    }
    if (total != t_.meta().num_events()) {
      Error("", absl::StrCat(total, " events in tiles, metadata says ", t_.meta().num_events()));
    }
  }

  const Table& t_;
  const bool numeric_flows_;  // flow ids may be numbers (format/flow_id.h)
  absl::flat_hash_map<uint32_t, uint64_t> per_track_;
  std::string last_run_;
  int64_t last_ts_ = INT64_MIN;
  uint64_t tiles_ = 0, rows_ = 0, args_ = 0, errors_ = 0, memory_segments_ = 0;
  uint64_t thread_times_ = 0, rows_with_thread_time_ = 0;
  uint64_t search_tiles_ = 0, search_chunks_ = 0, search_groups_ = 0, search_postings_ = 0, max_rank_ = 0;
  absl::flat_hash_set<uint32_t> chunked_names_;  // names with "N" keys
};

}  // namespace

int VerifyMain(int argc, char** argv) {
  po::options_description opts(
      "usage: tracetable verify TABLE|RUN\n\n"
      "A run: its manifest, then every shard whole and against its manifest entry; a missing\n"
      "or corrupt shard is named by host.\n\noptions");
  opts.add_options()("help,h", "show this help");
  std::vector<std::string> args;
  po::variables_map vm;
  if (auto exit = ParseCommandLine("verify", argc, argv, opts, &args, 1, &vm)) return *exit;
  const std::string path = args.empty() ? "" : args[0];
  if (path.empty()) return Fail("verify", "no table given (see --help)");
  if (IsRun(path)) {
    return VerifyRun(path, [](const Table& shard) { return static_cast<uint64_t>(Verifier(shard).Run()); });
  }
  // Not errors of the table, but disk it does not account for.
  for (const Leftover& l : FindLeftovers(path)) {
    std::cout << "leftover: " << l.path << " (pid " << l.pid
              << (l.writing ? ", an ingest still writing)\n"
                            : ", an ingest that was killed; the next ingest of this table removes it)\n");
  }
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(path);
  if (!t.ok()) return Fail("verify", t.status().message());
  return Verifier(**t).Run();
}

}  // namespace tracetable::cli
