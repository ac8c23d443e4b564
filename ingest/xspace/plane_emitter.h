// Turns one decoded XPlane (wire_reader.h) into EventSink calls: the plane is a process,
// its lines are threads (or counter series for the "_counters_" line), its
// events are slices with flow events for "flow" stats. See reader.h for the
// mapping rules; this file implements them.
#ifndef TRACETABLE_INGEST_XSPACE_PLANE_EMITTER_H_
#define TRACETABLE_INGEST_XSPACE_PLANE_EMITTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "ingest/xspace/wire_reader.h"
#include "store/event_sink.h"

namespace tracetable::xspace_internal {

// pids for planes given their ids in file order: the ids when they are
// distinct, else every plane's index (real files have /host:CPU and
// /device:GPU:0 both with id 0), so pids stay unique and stable.
std::vector<std::string> PlanePids(const std::vector<int64_t>& plane_ids);

// Host planes first (in file order), then devices by their number
// ("/device:GPU:3" -> 3), then any other plane in file order.
int64_t PlaneSortIndex(std::string_view name, size_t index);

// Turns one decoded XPlane into sink calls. Lives for one plane: its caches
// are keyed by the plane's metadata ids.
class PlaneEmitter {
 public:
  PlaneEmitter(EventSink* sink, const xspace_wire::PlaneView& plane,
               std::string pid)
      : sink_(sink), plane_(plane), pid_text_(std::move(pid)) {
    // Most metadata is used; growing would move every MetaInfo again.
    meta_cache_.reserve(plane.event_metadata.size());
  }

  // `line_done(events_done, events_total)` runs after each line, so callers
  // can report progress inside a big plane.
  absl::Status Emit(
      int64_t sort_index,
      const std::function<void(uint64_t, uint64_t)>& line_done = {});
  // The plane's own stats (device properties) as a JSON object, or "".
  std::string PlaneStatsJson();

 private:
  // A run of meta_text_: offsets stay valid while it grows. One text buffer
  // for all metadata, not strings per metadata, because a real plane has
  // thousands of event metadata used by a few events each.
  struct TextRef {
    size_t offset = 0;
    size_t size = 0;
  };
  struct MetaMember {
    int64_t stat_id = 0;
    TextRef text;  // "key":value
  };
  // What the events of one XEventMetadata share, computed once per plane.
  struct MetaInfo {
    TextRef name;  // display_name or name (or a placeholder if missing)
    uint32_t name_id = 0;
    TextRef long_name_member;  // "long_name":"..." when display_name won
    uint32_t members_begin = 0;  // [begin, end) in meta_members_: the
    uint32_t members_end = 0;    // metadata's stats as args members
    const xspace_wire::EventMetadataView* md = nullptr;
  };
  // One lookup per stat of an event tells all the emitter needs of its key.
  struct StatInfo {
    std::string name;
    std::string json_key;  // "name": ready to append
    bool step_name = false;  // its value names the event
    bool flow = false;       // its value is a packed flow id
  };

  IdToken Pid() const { return IdToken{pid_text_, true}; }
  std::string_view Text(TextRef ref) const {
    return std::string_view(meta_text_).substr(ref.offset, ref.size);
  }
  TextRef TextSince(size_t offset) const {
    return {offset, meta_text_.size() - offset};
  }
  const MetaInfo& Meta(int64_t id);
  const StatInfo& Stat(int64_t id);
  using LineView = xspace_wire::LineView;
  using EventView = xspace_wire::EventView;
  using StatView = xspace_wire::StatView;
  using Stats = std::span<const StatView>;

  absl::Status EmitThreadLine(const LineView& line, int64_t order);
  absl::Status EmitCounterLine(const LineView& line);
  absl::Status EmitSlice(const LineView& line, const EventView& event,
                         uint32_t track, uint32_t cat);
  absl::Status EmitFlow(const Event& slice, uint64_t flow);
  // BuildArgs and EmitFlows read event_keys_, which EmitSlice fills.
  void BuildArgs(const MetaInfo& meta, Stats stats);
  void AppendValue(const StatView& stat);
  absl::Status EmitFlows(const Event& slice, Stats stats);
  std::optional<int64_t> StartPs(const LineView& line, const EventView& event);
  // The metadata id of the stat holding the counter value, if any.
  std::optional<int64_t> FindCounterValue(const MetaInfo& meta, Stats stats,
                                          double* value) const;
  void ReportNotes();

  EventSink* sink_;
  const xspace_wire::PlaneView& plane_;
  std::string pid_text_;
  absl::flat_hash_map<int64_t, MetaInfo> meta_cache_;
  std::string meta_text_;
  std::vector<MetaMember> meta_members_;
  // Nodes: the StatInfo pointers of one event's stats (event_keys_) stay
  // valid while more stats are added.
  absl::node_hash_map<int64_t, StatInfo> stat_cache_;
  std::vector<const StatInfo*> event_keys_;  // of the current event's stats
  absl::flat_hash_map<uint64_t, uint32_t> flow_cat_cache_;
  absl::flat_hash_set<int64_t> named_tids_;
  // JSON text of ref values by referenced id: refs repeat across events.
  absl::flat_hash_map<uint64_t, std::string> ref_json_cache_;
  std::string args_;  // reused buffer for Event.args_json
  // Oddities counted here and reported once per plane.
  uint64_t missing_metadata_ = 0;
  uint64_t bad_times_ = 0;
  std::string first_bad_time_;
  uint64_t negative_durations_ = 0;
};

}  // namespace tracetable::xspace_internal

#endif  // TRACETABLE_INGEST_XSPACE_PLANE_EMITTER_H_
