#include "store/run_shards.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "format/flow_id.h"
#include "format/keys.h"
#include "format/memory_segment_codec.h"
#include "format/tracetable.pb.h"
#include "leveldb/cache.h"
#include "store/run_manifest.h"
#include "store/run_view_coarse.h"

namespace tracetable {
namespace {

uint32_t BigEndian32(std::string_view b) {
  return (uint32_t{static_cast<uint8_t>(b[0])} << 24) | (uint32_t{static_cast<uint8_t>(b[1])} << 16) |
         (uint32_t{static_cast<uint8_t>(b[2])} << 8) | uint32_t{static_cast<uint8_t>(b[3])};
}

uint32_t Map(const std::vector<uint32_t>& m, uint32_t id) { return id < m.size() ? m[id] : 0; }

}  // namespace

RunShards::RunShards(std::string run_path, std::vector<RunShardMap> shards, const Table::Options& options)
    : run_path_(std::move(run_path)),
      shards_(std::move(shards)),
      cache_(leveldb::NewLRUCache(options.cache_bytes)),
      capacity_(std::max<size_t>(1, options.max_open_shards)) {
  shard_options_ = options;
  shard_options_.shared_cache = cache_.get();
  shard_options_.load_strings = false;
  struct stat st;
  if (::stat(ManifestPath().c_str(), &st) == 0) {
    manifest_dev_ = st.st_dev;
    manifest_ino_ = st.st_ino;
  }
}

std::string RunShards::ManifestPath() const { return absl::StrCat(run_path_, "/", kRunFileName); }

absl::Status RunShards::CheckManifest() const {
  if (manifest_ino_ == 0) return absl::OkStatus();
  struct stat st;
  if (::stat(ManifestPath().c_str(), &st) != 0 || st.st_dev != manifest_dev_ || st.st_ino != manifest_ino_) {
    return absl::FailedPreconditionError(absl::StrCat(
        run_path_, ": the run changed since it was opened (a shard added or replaced); reopen it"));
  }
  return absl::OkStatus();
}

RunShards::~RunShards() {
  // Shards read through cache_; they go first.
  open_.clear();
  lru_.clear();
}

absl::Status RunShards::Named(size_t i, const absl::Status& s) const {
  return absl::Status(s.code(), absl::StrCat("shard of host \"", shards_[i].host, "\" (", shards_[i].dir,
                                             "): ", s.message()));
}

absl::StatusOr<std::unique_ptr<Table>> RunShards::Open(size_t i, const Table::Options& options) const {
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(shards_[i].dir, options);
  if (!t.ok()) return Named(i, t.status());
  // A shard replaced since the run was opened has other ids and strings:
  // reading it through the old maps would answer wrongly.
  if (!shards_[i].table_id.empty() && (*t)->identity() != shards_[i].table_id) {
    return Named(i, absl::FailedPreconditionError(
                        "the shard was replaced since the run was opened (re-ingested?); reopen the run"));
  }
  return t;
}

absl::StatusOr<std::unique_ptr<Table>> RunShards::OpenWithStrings(size_t i) const {
  Table::Options o = shard_options_;
  o.load_strings = true;
  ++opened_with_strings_;
  return Open(i, o);
}

absl::StatusOr<std::shared_ptr<const Table>> RunShards::Acquire(size_t i) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = open_.find(i); it != open_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return lru_.front().second;
  }
  ++opened_for_reads_;
  absl::StatusOr<std::unique_ptr<Table>> t = Open(i, shard_options_);
  if (!t.ok()) return t.status();
  lru_.emplace_front(i, std::shared_ptr<const Table>(std::move(*t)));
  open_[i] = lru_.begin();
  while (lru_.size() > capacity_) {
    open_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return lru_.front().second;
}

uint32_t RunShards::LocalString(size_t i, uint32_t global) const {
  std::lock_guard<std::mutex> lock(reverse_mu_);
  if (local_strings_.empty()) local_strings_.resize(shards_.size());
  if (!local_strings_[i]) {
    local_strings_[i] = std::make_unique<absl::flat_hash_map<uint32_t, uint32_t>>();
    const std::vector<uint32_t>& m = shards_[i].strings;
    for (size_t k = 1; k < m.size(); ++k) local_strings_[i]->emplace(m[k], static_cast<uint32_t>(k));
  }
  auto it = local_strings_[i]->find(global);
  return it == local_strings_[i]->end() ? 0 : it->second;
}

uint32_t RunShards::LocalFlow(size_t i, uint32_t global) const {
  if (!IsNumericFlowId(global)) return LocalString(i, global);
  if (!shards_[i].flow_numbers_as_strings) return global;
  uint32_t text = 0;
  {
    std::lock_guard<std::mutex> lock(reverse_mu_);
    if (!number_strings_) {
      number_strings_ = std::make_unique<absl::flat_hash_map<uint32_t, uint32_t>>();
      for (size_t k = 1; k < strings_->size(); ++k) {
        if (std::optional<uint32_t> n = NumericFlowId((*strings_)[k])) number_strings_->emplace(*n, k);
      }
    }
    auto it = number_strings_->find(global);
    if (it == number_strings_->end()) return 0;
    text = it->second;
  }
  return LocalString(i, text);
}

uint32_t RunShards::GlobalFlow(const RunShardMap& s, const std::vector<uint32_t>& strings, uint32_t id) const {
  // Numbers are the same in every shard.
  if (IsNumericFlowId(id)) return id;
  const uint32_t global = Map(strings, id);
  if (s.flow_numbers_as_strings && global != 0 && global < strings_->size()) {
    if (std::optional<uint32_t> n = NumericFlowId((*strings_)[global])) return *n;
  }
  return global;
}

size_t RunShards::open_shards() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

uint64_t RunShards::GlobalId(const RunShardMap& s, uint64_t local) const {
  if (local == 0) return 0;
  return local <= s.read_ids ? s.read_base + local : s.derived_base + (local - s.read_ids);
}

bool RunShards::LocalId(uint64_t global, size_t* shard, uint64_t* local) const {
  for (size_t i = 0; i < shards_.size(); ++i) {
    const RunShardMap& s = shards_[i];
    if (global > s.read_base && global <= s.read_base + s.read_ids) {
      *shard = i;
      *local = global - s.read_base;
      return true;
    }
    if (global > s.derived_base && global <= s.derived_base + s.derived_ids) {
      *shard = i;
      *local = s.read_ids + (global - s.derived_base);
      return true;
    }
  }
  return false;
}

int64_t RunShards::run_max_end() const { return meta_->max_end(); }

void RunShards::ToGlobal(const RunShardMap& s, bool async, TileRow* r) const {
  r->ts += s.time_offset;
  // A begin without an end runs to the end of the trace: the run's end.
  // (An event's covered and longest are its duration: tile_codec.h.)
  if ((r->flags & kFlagIncomplete) && r->count == 1) {
    r->dur = std::max<int64_t>(r->dur, meta_->max_end() - r->ts);
    r->covered = static_cast<uint64_t>(r->dur);
    r->longest_dur = r->dur;
  }
  r->name = Map(s.strings, r->name);
  r->cat = Map(s.strings, r->cat);
  r->flow_id = GlobalFlow(s, async && !s.async_strings.empty() ? s.async_strings : s.strings, r->flow_id);
  r->flow_out = GlobalFlow(s, s.strings, r->flow_out);
  r->flow_in = GlobalFlow(s, s.strings, r->flow_in);
  if (r->count == 1) r->id = GlobalId(s, r->id);
}

absl::Status RunShards::ReadTiles(uint32_t track, TileSection section, int level, int64_t from, int64_t to,
                                  std::vector<TileRow>* rows, ReadStats* stats) const {
  if (track >= homes_.size()) return absl::InvalidArgumentError(absl::StrCat("no track ", track));
  const auto [i, local, async] = homes_[track];
  const RunShardMap& s = shards_[i];
  if (local == UINT32_MAX) {
    absl::StatusOr<std::shared_ptr<const Table>> t = Acquire(i);
    return t.ok() ? Named(i, absl::UnavailableError("the shard did not open when the run was opened; reopen the run"))
                  : t.status();
  }
  // Summary bins are aligned at the table's min_ts and levels stop at its
  // num_levels: a shard built on another grid cannot answer a coarse level
  // as one table would. Every window above level 0 reads summaries (events
  // alone, and resolution-0 reads, are the same on any grid).
  if (section == TileSection::kSummaries && (s.min_ts + s.time_offset != meta_->min_ts() ||
                    s.num_levels != static_cast<int>(meta_->num_levels()))) {
    return Named(i, absl::FailedPreconditionError(
                        "the shard's summary grid (min_ts, levels) differs from the run's; only resolution 0 "
                        "can be answered exactly (rebuild the shard with the run's grid)"));
  }
  const size_t first = rows->size();
  // The view's copy of the shard's coarse tiles answers as the shard would,
  // without opening it (store/run_view_coarse.h).
  if (s.coarse && s.coarse->Covers(section, level)) {
    if (absl::Status st = s.coarse->Read(local, section, level, from - s.time_offset, to - s.time_offset, s.min_ts,
                                         rows, stats);
        !st.ok()) {
      return Named(i, st);
    }
    for (size_t k = first; k < rows->size(); ++k) ToGlobal(s, async, &(*rows)[k]);
    return absl::OkStatus();
  }
  ++shard_tile_reads_;
  absl::StatusOr<std::shared_ptr<const Table>> t = Acquire(i);
  if (!t.ok()) return t.status();
  if (absl::Status st = (*t)->ReadTiles(local, section, level, from - s.time_offset, to - s.time_offset, rows,
                                        stats);
      !st.ok()) {
    return Named(i, st);
  }
  for (size_t k = first; k < rows->size(); ++k) ToGlobal(s, async, &(*rows)[k]);
  return absl::OkStatus();
}

absl::StatusOr<std::string> RunShards::Args(uint64_t event_id) const {
  size_t i = 0;
  uint64_t local = 0;
  if (!LocalId(event_id, &i, &local)) return absl::NotFoundError(absl::StrCat("no event ", event_id));
  absl::StatusOr<std::shared_ptr<const Table>> t = Acquire(i);
  if (!t.ok()) return t.status();
  absl::StatusOr<std::string> a = (*t)->Args(local);
  if (!a.ok() && !absl::IsNotFound(a.status())) return Named(i, a.status());
  return a;
}

absl::StatusOr<ThreadTimeEntry> RunShards::ThreadTime(uint64_t event_id) const {
  size_t i = 0;
  uint64_t local = 0;
  if (!LocalId(event_id, &i, &local)) return absl::NotFoundError(absl::StrCat("no event ", event_id));
  // An event of the view's coarse tiles has its thread time there too.
  if (const CoarseTiles* c = shards_[i].coarse.get(); c != nullptr) {
    if (const ThreadTimeEntry* e = c->ThreadTime(local); e != nullptr) {
      ThreadTimeEntry out = *e;
      out.slot = static_cast<uint32_t>(event_id & 255);
      return out;
    }
  }
  absl::StatusOr<std::shared_ptr<const Table>> t = Acquire(i);
  if (!t.ok()) return t.status();
  absl::StatusOr<ThreadTimeEntry> e = (*t)->ThreadTime(local);
  if (!e.ok() && !absl::IsNotFound(e.status())) return Named(i, e.status());
  if (e.ok()) e->slot = static_cast<uint32_t>(event_id & 255);
  return e;
}

absl::Status RunShards::Get(std::string_view key, std::string* value) const {
  if (key.size() == 5 && key[0] == 'F') return GetFlowBlock(BigEndian32(key.substr(1)), value);
  if (key.size() == 9 && key[0] == 'Y') {
    return GetMemorySegment(BigEndian32(key.substr(1)), BigEndian32(key.substr(5)), value);
  }
  return absl::UnimplementedError(absl::StrCat(run_path_, ": a run has no record of this key"));
}

// The block of global flow ids [block*256, block*256+256): each shard's tiles
// of the ids it knows, in shard order, with global tracks and tile starts.
absl::Status RunShards::GetFlowBlock(uint32_t block, std::string* value) const {
  proto::FlowTiles out;
  const uint32_t first = block << kFlowBlockShift;
  // The shards' blocks, each read once: the 256 numbers of a block are one
  // block of every shard that holds them as numbers.
  absl::flat_hash_map<std::pair<size_t, uint32_t>, std::unique_ptr<proto::FlowTiles>> blocks;
  auto shard_block = [&](size_t i, uint32_t local_block) -> absl::StatusOr<const proto::FlowTiles*> {
    auto [it, inserted] = blocks.try_emplace({i, local_block});
    if (!inserted) return it->second.get();
    absl::StatusOr<std::shared_ptr<const Table>> t = Acquire(i);
    if (!t.ok()) return t.status();
    if (!(*t)->meta().has_flow_index()) return nullptr;
    std::string v;
    absl::Status got = (*t)->Get(FlowBlockKey(local_block), &v);
    if (absl::IsNotFound(got)) return nullptr;
    if (!got.ok()) return Named(i, got);
    it->second = std::make_unique<proto::FlowTiles>();
    if (!it->second->ParseFromString(v)) {
      return Named(i, absl::DataLossError("corrupt table: flow block does not parse"));
    }
    return it->second.get();
  };
  for (uint32_t slot = 0; slot < (1u << kFlowBlockShift); ++slot) {
    const uint32_t global = first + slot;
    if (!IsNumericFlowId(global) && global >= strings_->size()) break;
    uint32_t count = 0;
    for (size_t i = 0; i < shards_.size(); ++i) {
      const RunShardMap& s = shards_[i];
      const uint32_t local = LocalFlow(i, global);
      if (local == 0) continue;
      absl::StatusOr<const proto::FlowTiles*> got = shard_block(i, local >> kFlowBlockShift);
      if (!got.ok()) return got.status();
      if (*got == nullptr) continue;
      const proto::FlowTiles& b = **got;
      const uint32_t want = local & ((1u << kFlowBlockShift) - 1);
      int at = 0;
      for (int k = 0; k < b.slot_size(); at += static_cast<int>(b.count(k)), ++k) {
        if (b.slot(k) != want) continue;
        if (at + static_cast<int64_t>(b.count(k)) > b.track_size() || b.track_size() != b.level_size() ||
            b.track_size() != b.start_size()) {
          return Named(i, absl::DataLossError("corrupt table: flow block columns disagree"));
        }
        for (int e = at; e < at + static_cast<int>(b.count(k)); ++e) {
          out.add_track(Map(s.tracks, b.track(e)));
          out.add_level(b.level(e));
          out.add_start(static_cast<uint64_t>(s.min_ts + s.time_offset + static_cast<int64_t>(b.start(e)) -
                                              meta_->min_ts()));
          ++count;
        }
        break;
      }
    }
    if (count > 0) {
      out.add_slot(slot);
      out.add_count(count);
    }
  }
  if (out.slot_size() == 0) return absl::NotFoundError("no flow in this block");
  *value = out.SerializeAsString();
  return absl::OkStatus();
}

absl::Status RunShards::GetMemorySegment(uint32_t id, uint32_t segment, std::string* value) const {
  for (size_t i = 0; i < shards_.size(); ++i) {
    const RunShardMap& s = shards_[i];
    if (id < s.memory_base || id >= s.memory_base + s.num_memory) continue;
    absl::StatusOr<std::shared_ptr<const Table>> t = Acquire(i);
    if (!t.ok()) return t.status();
    std::string v;
    if (absl::Status got = (*t)->Get(MemorySegmentKey(id - s.memory_base, segment), &v); !got.ok()) {
      return absl::IsNotFound(got) ? got : Named(i, got);
    }
    proto::MemorySegment m;
    if (!m.ParseFromString(v)) return Named(i, absl::DataLossError("corrupt table: memory segment does not parse"));
    // Rewritten with run times and ids, as plain columns (coding 0).
    if (absl::Status d = DecodeSegmentColumns(&m); !d.ok()) {
      return Named(i, absl::DataLossError(absl::StrCat("corrupt table: ", d.message())));
    }
    if (m.ts_delta_size() > 0) m.set_ts_delta(0, m.ts_delta(0) + s.time_offset);
    for (int k = 0; k < m.alloc_ts_size(); ++k) m.set_alloc_ts(k, m.alloc_ts(k) + s.time_offset);
    for (int k = 0; k < m.free_ts_size() && k < m.free_seq_size(); ++k) {
      if (m.free_seq(k) != 0) m.set_free_ts(k, m.free_ts(k) + s.time_offset);
    }
    for (auto* col : {m.mutable_op(), m.mutable_shape(), m.mutable_data_type(), m.mutable_region()}) {
      for (uint32_t& x : *col) x = Map(s.strings, x);
    }
    for (uint64_t& e : *m.mutable_event_id()) e = GlobalId(s, e);
    *value = m.SerializeAsString();
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("no memory ID ", id));
}

}  // namespace tracetable
