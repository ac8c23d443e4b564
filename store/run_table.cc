#include "store/run_table.h"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/levels.h"
#include "format/time.h"
#include "leveldb/cache.h"
#include "store/fixed_coding.h"
#include "store/run_manifest.h"
#include "store/run_shards.h"
#include "store/run_view.h"
#include "store/table_files.h"
#include "store/table_format.h"

namespace tracetable {
namespace {

// The builder counts each begin it keeps without an end under a reason
// ending so (store/table_builder.cc, flush_unmatched).
bool HasIncomplete(const proto::TableMeta& meta) {
  for (const auto& [reason, n] : meta.skipped_counts()) {
    if (n > 0 && absl::EndsWith(reason, "(kept as incomplete)")) return true;
  }
  return false;
}

}  // namespace

// Builds the merged view shard by shard (see run_table.h for the numbering).
class RunTableMaker {
 public:
  RunTableMaker(std::string path, int64_t origin_ns, const std::vector<RunShardSource>& sources,
                const Table::Options& options, RunView* view)
      : path_(std::move(path)), origin_ns_(origin_ns), view_(view) {
    std::vector<RunShardMap> maps(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      maps[i].host = sources[i].host;
      maps[i].dir = sources[i].dir;
      maps[i].table_id = sources[i].table_id;
    }
    shards_ = std::make_shared<RunShards>(path_, std::move(maps), options);
    t_.reset(new Table());
    t_->path_ = path_;
    if (view_) {
      std::vector<std::string> ids;
      for (const RunShardSource& src : sources) ids.push_back(src.table_id);
      whole_view_ = view_->Matches(ids);
    }
  }

  absl::StatusOr<std::unique_ptr<Table>> Make() {
    struct stat st;
    if (::stat(path_.c_str(), &st) != 0) return absl::NotFoundError(absl::StrCat(path_, ": no such run"));
    t_->folder_dev_ = st.st_dev;
    t_->folder_ino_ = st.st_ino;
    std::vector<RunShardMap>& maps = shards_->mutable_shards();
    metas_.resize(maps.size());
    resources_.resize(maps.size());
    for (size_t i = 0; i < maps.size(); ++i) {
      if (absl::Status s = LoadShard(i); !s.ok()) Placeholder(i, s);
    }
    const bool several = maps.size() > 1;
    MergeMeta(several);
    MergeProcesses(several);
    MergeTracks();
    MergeIdsAndMemory();
    t_->strings_ = whole_view_ ? std::move(view_->strings) : strings_.Take();
    t_->meta_.set_num_strings(t_->strings_.size());
    shards_->SetTrackHomes(std::move(homes_));
    shards_->SetGlobalView(&t_->meta_, &t_->strings_);
    t_->run_ = shards_;
    return std::move(t_);
  }

 private:
  // A shard's metadata, resources and string map: from the view when it
  // has the identity the manifest names (no shard is opened; with a view
  // that matches the manifest, its string table and maps are the run's),
  // else by opening the shard (and closing it again: reads open it anew).
  absl::Status LoadShard(size_t i) {
    RunShardMap& m = shards_->mutable_shards()[i];
    const ViewShard* v = whole_view_                           ? &view_->shards[i]
                         : view_ && !m.table_id.empty() ? view_->Find(m.table_id)
                                                        : nullptr;
    if (v != nullptr) m.coarse = v->coarse;
    if (whole_view_) {
      Place(i, v->identity, v->meta, v->resources);
      m.strings = v->strings;
      m.async_strings = v->async_strings;
      return absl::OkStatus();
    }
    if (v != nullptr) {
      Place(i, v->identity, v->meta, v->resources);
      strings_.AddShard(i, view_->LocalStrings(*v), HasAsyncTracks(v->resources), &m.strings, &m.async_strings);
      return absl::OkStatus();
    }
    absl::StatusOr<std::unique_ptr<Table>> t = shards_->OpenWithStrings(i);
    if (!t.ok()) return t.status();
    const Table& s = **t;
    Place(i, s.identity(), s.meta(), s.resources());
    std::vector<std::string> local;
    local.reserve(s.num_strings());
    for (size_t k = 0; k < s.num_strings(); ++k) local.emplace_back(s.String(static_cast<uint32_t>(k)));
    strings_.AddShard(i, local, HasAsyncTracks(s.resources()), &m.strings, &m.async_strings);
    return absl::OkStatus();
  }

  // Takes a shard's metadata and resources into the merged view's inputs.
  void Place(size_t i, const std::string& identity, const proto::TableMeta& meta,
             const proto::ResourceTable& resources) {
    RunShardMap& m = shards_->mutable_shards()[i];
    metas_[i] = meta;
    resources_[i] = resources;
    // An input ingested alone has no host name (one host needs none); in a
    // run of several it is the shard's host, as one ingest of them names it.
    if (shards_->shards().size() > 1) NameHost(i);
    if (m.table_id.empty()) m.table_id = identity;
    identities_ += identity;
    // Relative times are exact integers; origins differ only by whole ns.
    // A shard whose clock is too far from the run's to share its time base
    // starts where the run starts, as one ingest shifts such an input.
    if (absl::StatusOr<int64_t> rel = RelativePs(meta.origin_ns(), 0, origin_ns_); rel.ok()) {
      m.time_offset = *rel;
    } else if (metas_[i].inputs_size() > 0) {
      const int64_t shift = origin_ns_ - meta.origin_ns();
      metas_[i].mutable_inputs(0)->set_clock_shift_ns(shift);
      metas_[i].add_warnings(absl::StrCat("input ", i, ": timestamps start ", meta.origin_ns(),
                                          " ns, too far from the first input's ", origin_ns_,
                                          " ns to share a table; shifted by ", shift, " ns to start with it"));
    }
    m.min_ts = meta.min_ts();
    m.max_end = meta.max_end();
    m.num_levels = static_cast<int>(meta.num_levels());
    m.stats_index = meta.has_stats_index();
    m.incomplete = HasIncomplete(meta);
    m.flow_numbers_as_strings = meta.format_version() < kNumericFlowIdsVersion;
  }

  void NameHost(size_t i) {
    const std::string& host = shards_->shards()[i].host;
    for (proto::InputInfo& in : *metas_[i].mutable_inputs()) {
      if (in.host().empty()) in.set_host(host);
    }
    for (proto::Process& p : *resources_[i].mutable_processes()) {
      if (p.host().empty()) p.set_host(host);
    }
    for (proto::MemoryId& id : *metas_[i].mutable_memory()->mutable_ids()) {
      if (id.host().empty()) id.set_host(host);
    }
  }

  // A shard that does not open: one process of its host with one track whose
  // reads fail with `why`, so a query that needs it says so and others answer.
  void Placeholder(size_t i, const absl::Status& why) {
    const RunShardMap& m = shards_->shards()[i];
    metas_[i] = proto::TableMeta();
    proto::InputInfo* in = metas_[i].add_inputs();
    in->set_path(m.dir);
    in->set_host(m.host);
    metas_[i].add_warnings(std::string(why.message()));
    resources_[i] = proto::ResourceTable();
    proto::Process* p = resources_[i].add_processes();
    p->set_pid(absl::StrCat("unavailable shard ", i));
    p->set_name("(shard unavailable)");
    p->set_host(m.host);
    proto::Track* tr = resources_[i].add_tracks();
    tr->set_name("(shard unavailable)");
    tr->set_tid("0");
    // Not empty, so every query over it reads it and meets the error.
    proto::ClassExtent* c = tr->add_classes();
    c->set_count(1);
    c->set_min_ts(INT64_MIN / 4);
    c->set_max_end(INT64_MAX / 4);
    broken_.push_back(i);
  }

  bool Broken(size_t i) const { return std::find(broken_.begin(), broken_.end(), i) != broken_.end(); }

  void MergeMeta(bool several) {
    proto::TableMeta& g = t_->meta_;
    g.set_format_version(kFormatVersion);
    g.set_origin_ns(origin_ns_);
    int64_t min_ts = INT64_MAX, max_end = INT64_MIN;
    uint64_t flows = 0, postings = 0, blocks = 0, bytes = 0;
    bool flow_index = !metas_.empty();
    for (size_t i = 0; i < metas_.size(); ++i) {
      const proto::TableMeta& m = metas_[i];
      const int64_t off = shards_->shards()[i].time_offset;
      if (!Broken(i) && m.num_events() > 0) {
        min_ts = std::min(min_ts, m.min_ts() + off);
        max_end = std::max(max_end, m.max_end() + off);
      }
      g.set_num_events(g.num_events() + m.num_events());
      for (const auto& [k, v] : m.phase_counts()) (*g.mutable_phase_counts())[k] += v;
      for (const auto& [k, v] : m.skipped_counts()) (*g.mutable_skipped_counts())[k] += v;
      for (const std::string& w : m.warnings()) {
        if (g.warnings_size() < 1000) g.add_warnings(w);
      }
      for (const proto::InputInfo& in : m.inputs()) *g.add_inputs() = in;
      if (g.created_by().empty()) g.set_created_by(m.created_by());
      g.set_max_depth(std::max(g.max_depth(), m.max_depth()));
      flow_index = flow_index && (Broken(i) || m.has_flow_index());
      flows += m.flow_index().flows();
      postings += m.flow_index().postings();
      blocks += m.flow_index().blocks();
      bytes += m.flow_index().bytes();
    }
    if (min_ts == INT64_MAX) min_ts = max_end = 0;
    g.set_min_ts(min_ts);
    g.set_max_end(max_end);
    g.set_num_levels(NumLevelsForSpan(max_end - min_ts));
    if (flow_index) {
      g.mutable_flow_index()->set_flows(flows);
      g.mutable_flow_index()->set_postings(postings);
      g.mutable_flow_index()->set_blocks(blocks);
      g.mutable_flow_index()->set_bytes(bytes);
    }
    const uint32_t crc = Crc32(identities_);
    t_->identity_ = absl::StrCat("r", absl::Hex(crc, absl::kZeroPad8), absl::Hex(identities_.size()),
                                 absl::Hex(metas_.size()));
    g.set_table_id(t_->identity_);
  }

  void MergeProcesses(bool several) {
    proto::ResourceTable& g = t_->resources_;
    process_base_.resize(resources_.size());
    for (size_t i = 0; i < resources_.size(); ++i) {
      process_base_[i] = static_cast<uint32_t>(g.processes_size());
      for (const proto::Process& local : resources_[i].processes()) {
        proto::Process& p = *g.add_processes();
        p = local;
        p.set_id(static_cast<uint32_t>(g.processes_size() - 1));
        p.set_input(static_cast<uint32_t>(i));
        int64_t pid = 0;
        const bool numeric = p.pid_is_number() && absl::SimpleAtoi(p.pid(), &pid);
        p.set_out_pid(several || !numeric ? p.id() + 1 : pid);
        if (several && !p.host().empty()) {
          p.set_name(absl::StrCat(p.host(), " ", p.name().empty() ? absl::StrCat("pid ", p.pid()) : p.name()));
        }
      }
    }
  }

  // Tracks read from the inputs come first, shard by shard; async tracks are
  // made while matching, after every input is read, in the order of their
  // keys' string ids (so input by input: keys of input N > 0 are interned as
  // "key|input N" once its reading began); derived tracks last.
  void MergeTracks() {
    std::vector<std::tuple<int, size_t, uint32_t>> order;  // (phase, shard, local)
    for (size_t i = 0; i < resources_.size(); ++i) {
      for (const proto::Track& tr : resources_[i].tracks()) {
        if (tr.derived()) {
          order.emplace_back(2, i, tr.id());
        } else if (tr.kind() == proto::Track::ASYNC) {
          order.emplace_back(1, i, tr.id());
        } else {
          order.emplace_back(0, i, tr.id());
        }
      }
    }
    std::stable_sort(order.begin(), order.end());
    std::vector<RunShardMap>& maps = shards_->mutable_shards();
    for (size_t i = 0; i < maps.size(); ++i) maps[i].tracks.assign(resources_[i].tracks_size(), 0);
    proto::ResourceTable& g = t_->resources_;
    for (const auto& [phase, i, local] : order) {
      const uint32_t id = static_cast<uint32_t>(g.tracks_size());
      proto::Track& tr = *g.add_tracks();
      tr = resources_[i].tracks(static_cast<int>(local));
      tr.set_id(id);
      tr.set_process(process_base_[i] + tr.process());
      int64_t tid = 0;
      if (tr.kind() == proto::Track::THREAD && tr.tid_is_number() && absl::SimpleAtoi(tr.tid(), &tid)) {
        tr.set_out_tid(tid);
      } else {
        tr.set_out_tid(kSyntheticTidBase + id);
      }
      const int64_t off = maps[i].time_offset;
      const int64_t run_end = t_->meta_.max_end();
      for (proto::ClassExtent& c : *tr.mutable_classes()) {
        if (c.count() == 0) continue;
        c.set_min_ts(c.min_ts() + off);
        c.set_max_end(c.max_end() + off);
        // It may hold a begin without an end, which in the run lasts to the
        // run's end (store/run_shards.cc): reads must reach that far.
        if (c.max_end() == maps[i].max_end + off && run_end > c.max_end()) {
          c.set_max_dur(c.max_dur() + (run_end - c.max_end()));
          c.set_max_end(run_end);
        }
      }
      maps[i].tracks[local] = id;
      homes_.push_back(RunShards::TrackHome{static_cast<uint32_t>(i), Broken(i) ? UINT32_MAX : local,
                                            tr.kind() == proto::Track::ASYNC});
    }
  }

  void MergeIdsAndMemory() {
    std::vector<RunShardMap>& maps = shards_->mutable_shards();
    uint64_t read = 0;
    for (size_t i = 0; i < maps.size(); ++i) {
      RunShardMap& m = maps[i];
      m.read_ids = metas_[i].inputs_size() > 0 ? metas_[i].inputs(0).events() : 0;
      if (metas_[i].event_ids() >= m.read_ids) {
        m.derived_ids = metas_[i].event_ids() - m.read_ids;
      } else {  // a shard written before TableMeta.event_ids
        for (const proto::Track& tr : resources_[i].tracks()) {
          if (tr.derived()) m.derived_ids += tr.num_events();
        }
      }
      m.read_base = read;
      read += m.read_ids;
    }
    uint64_t derived = 0;
    for (const RunShardMap& m : maps) derived += m.derived_ids;
    t_->meta_.set_event_ids(read + derived);
    proto::MemoryProfile* mem = t_->meta_.mutable_memory();
    for (size_t i = 0; i < maps.size(); ++i) {
      RunShardMap& m = maps[i];
      m.derived_base = read;
      read += m.derived_ids;
      m.memory_base = static_cast<uint32_t>(mem->ids_size());
      m.num_memory = static_cast<uint32_t>(metas_[i].memory().ids_size());
      for (const proto::MemoryId& local : metas_[i].memory().ids()) {
        proto::MemoryId& id = *mem->add_ids();
        id = local;
        id.set_input(static_cast<uint32_t>(i));
        id.set_process(process_base_[i] + local.process());
        auto track = [&m](uint32_t t) { return t == 0 || t > m.tracks.size() ? 0 : m.tracks[t - 1] + 1; };
        id.set_in_use_track(track(local.in_use_track()));
        id.set_reserved_track(track(local.reserved_track()));
        id.set_available_track(track(local.available_track()));
        id.set_fragmentation_track(track(local.fragmentation_track()));
        const int64_t off = m.time_offset;
        id.set_peak_ts(local.peak_ts() + off);
        id.set_peak_reserved_ts(local.peak_reserved_ts() + off);
        id.set_first_ts(local.first_ts() + off);
        id.set_last_ts(local.last_ts() + off);
        for (int64_t& ts : *id.mutable_segment_ts()) ts += off;
      }
    }
    if (mem->ids_size() == 0) t_->meta_.clear_memory();
  }

  std::string path_;
  int64_t origin_ns_;
  RunView* view_;            // may be null; its strings are taken when whole
  bool whole_view_ = false;  // the view's shards are the run's: its strings and maps are used as they are
  std::shared_ptr<RunShards> shards_;
  std::unique_ptr<Table> t_;
  RunStrings strings_;
  std::vector<proto::TableMeta> metas_;
  std::vector<proto::ResourceTable> resources_;
  std::vector<uint32_t> process_base_;
  std::vector<RunShards::TrackHome> homes_;
  std::vector<size_t> broken_;
  std::string identities_;
};

absl::StatusOr<std::unique_ptr<Table>> OpenRunTable(const std::string& run_path, int64_t origin_ns,
                                                    const std::vector<RunShardSource>& shards,
                                                    const Table::Options& options, RunView* view) {
  if (shards.empty()) return absl::FailedPreconditionError(absl::StrCat(run_path, ": the run has no shards"));
  return RunTableMaker(run_path, origin_ns, shards, options, view).Make();
}

absl::StatusOr<std::unique_ptr<Table>> OpenRun(const std::string& run_path, const Table::Options& options) {
  absl::StatusOr<RunManifest> m = ReadRunManifest(run_path);
  if (!m.ok()) return m.status();
  std::vector<RunShardSource> sources;
  sources.reserve(m->shards.size());
  for (const RunShardInfo& s : m->shards) {
    sources.push_back(RunShardSource{s.host, absl::StrCat(run_path, "/", s.dir), s.table_id});
  }
  // A view that is missing, damaged or of another run is not used: the
  // shards it lacks are read as before (store/run_view.h).
  absl::StatusOr<RunView> view = ReadRunView(run_path);
  const bool usable = view.ok() && view->run_id == m->run_id;
  return OpenRunTable(run_path, m->origin_ns, sources, options, usable ? &*view : nullptr);
}

}  // namespace tracetable
