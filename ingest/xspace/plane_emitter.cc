#include "ingest/xspace/plane_emitter.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "ingest/xspace/stat_json.h"

namespace tracetable::xspace_internal {
namespace {

constexpr std::string_view kCountersLine = "_counters_";

}  // namespace

using xspace_wire::EventView;

std::vector<std::string> PlanePids(const std::vector<int64_t>& plane_ids) {
  absl::flat_hash_set<int64_t> seen;
  bool unique = true;
  for (int64_t id : plane_ids) unique &= seen.insert(id).second;
  std::vector<std::string> pids;
  pids.reserve(plane_ids.size());
  for (size_t i = 0; i < plane_ids.size(); ++i) {
    pids.push_back(
        absl::StrCat(unique ? plane_ids[i] : static_cast<int64_t>(i)));
  }
  return pids;
}

int64_t PlaneSortIndex(std::string_view name, size_t index) {
  constexpr int64_t kDeviceBase = int64_t{1} << 20;
  constexpr int64_t kOtherBase = int64_t{1} << 40;
  if (absl::StartsWith(Av(name), "/host:")) return static_cast<int64_t>(index);
  if (absl::StartsWith(Av(name), "/device:")) {
    const size_t colon = name.rfind(':');
    int64_t n;
    if (absl::SimpleAtoi(Av(name.substr(colon + 1)), &n) && n >= 0 &&
        n < kOtherBase - kDeviceBase) {
      return kDeviceBase + n;
    }
  }
  return kOtherBase + static_cast<int64_t>(index);
}

const PlaneEmitter::StatInfo& PlaneEmitter::Stat(int64_t id) {
  auto [it, inserted] = stat_cache_.try_emplace(id);
  if (inserted) {
    auto md = plane_.stat_metadata.find(id);
    // A stat with no metadata keeps its id visible instead of being dropped.
    it->second.name = md != plane_.stat_metadata.end()
                          ? std::string(md->second.name)
                          : absl::StrCat("stat#", id);
    if (md != plane_.stat_metadata.end()) {
      it->second.step_name = md->second.name == "step_name";
      it->second.flow = md->second.name == "flow";
    }
    AppendJsonString(&it->second.json_key, it->second.name);
    it->second.json_key.push_back(':');
  }
  return it->second;
}

const PlaneEmitter::MetaInfo& PlaneEmitter::Meta(int64_t id) {
  auto [it, inserted] = meta_cache_.try_emplace(id);
  if (!inserted) return it->second;
  MetaInfo& info = it->second;
  std::string_view name;
  std::string owned_name;  // a placeholder or a step_name value
  auto md = plane_.event_metadata.find(id);
  if (md == plane_.event_metadata.end()) {
    owned_name = absl::StrCat("<event metadata ", id, ">");
    name = owned_name;
  } else {
    info.md = &md->second;
    name = info.md->display_name.empty() ? info.md->name : info.md->display_name;
    if (!info.md->display_name.empty()) {
      const size_t start = meta_text_.size();
      meta_text_.append("\"long_name\":");
      xspace_json::AppendUtf8JsonString(&meta_text_, info.md->name);
      info.long_name_member = TextSince(start);
    }
    info.members_begin = static_cast<uint32_t>(meta_members_.size());
    for (const StatView& stat : plane_.StatsOf(*info.md)) {
      const StatInfo& key = Stat(stat.metadata_id);
      if (key.step_name) {
        owned_name = xspace_json::StatText(stat, plane_.stat_metadata);
        name = owned_name;
      }
      const size_t start = meta_text_.size();
      meta_text_.append(key.json_key);
      xspace_json::AppendStatValue(&meta_text_, stat, plane_.stat_metadata);
      meta_members_.push_back({stat.metadata_id, TextSince(start)});
    }
    info.members_end = static_cast<uint32_t>(meta_members_.size());
  }
  const size_t start = meta_text_.size();
  meta_text_.append(name);
  info.name = TextSince(start);
  info.name_id = sink_->Intern(name);
  return info;
}

absl::Status PlaneEmitter::Emit(
    int64_t sort_index,
    const std::function<void(uint64_t, uint64_t)>& line_done) {
  sink_->SetProcessName(Pid(), plane_.name);
  sink_->SetProcessSortIndex(Pid(), sort_index);
  const uint64_t total = plane_.events.size();
  uint64_t done = 0;
  for (size_t i = 0; i < plane_.lines.size(); ++i) {
    const LineView& line = plane_.lines[i];
    absl::Status s = line.name == kCountersLine
                         ? EmitCounterLine(line)
                         : EmitThreadLine(line, static_cast<int64_t>(i));
    if (!s.ok()) return s;
    done += line.events_size();
    if (line_done) line_done(done, total);
  }
  ReportNotes();
  return absl::OkStatus();
}

std::string PlaneEmitter::PlaneStatsJson() {
  if (plane_.plane_stats.empty()) return "";
  std::string out = "{";
  for (const StatView& stat : plane_.plane_stats) {
    if (out.size() > 1) out.push_back(',');
    out.append(Stat(stat.metadata_id).json_key);
    xspace_json::AppendStatValue(&out, stat, plane_.stat_metadata);
  }
  out.push_back('}');
  return out;
}

void PlaneEmitter::ReportNotes() {
  const std::string where =
      absl::StrCat("xspace plane '", Av(plane_.name), "'");
  if (missing_metadata_ > 0) {
    sink_->Warn(absl::StrCat(where, ": ", missing_metadata_,
                             " events refer to missing event metadata"));
  }
  if (bad_times_ > 0) {
    sink_->Warn(absl::StrCat(where, ": ", bad_times_,
                             " events skipped, time out of range (first: ",
                             first_bad_time_, ")"));
  }
  if (negative_durations_ > 0) {
    sink_->Warn(absl::StrCat(where, ": ", negative_durations_,
                             " negative durations stored as 0"));
  }
}

// line.timestamp_ns * 1000 + offset_ps, split into ns + 0..999 ps with floor
// division so negative offsets land on the right picosecond.
std::optional<int64_t> PlaneEmitter::StartPs(const LineView& line,
                                             const EventView& event) {
  const int64_t offset = event.offset_ps();
  int64_t ns = offset / 1000;
  int64_t ps = offset % 1000;
  if (ps < 0) {
    ps += 1000;
    --ns;
  }
  int64_t abs_ns;
  absl::StatusOr<int64_t> rel =
      __builtin_add_overflow(line.timestamp_ns, ns, &abs_ns)
          ? absl::OutOfRangeError("timestamp_ns + offset overflows int64")
          : sink_->ToRelativePs(abs_ns, static_cast<int32_t>(ps));
  if (rel.ok()) return *rel;
  // One bad line timestamp should not lose the rest of the profile.
  if (bad_times_++ == 0) first_bad_time_ = rel.status().ToString();
  sink_->CountSkipped("xspace event time out of range");
  return std::nullopt;
}

absl::Status PlaneEmitter::EmitThreadLine(const LineView& line, int64_t order) {
  const int64_t tid_num = line.display_id != 0 ? line.display_id : line.id;
  const std::string tid_text = absl::StrCat(tid_num);
  const IdToken tid{tid_text, true};
  const uint32_t track = sink_->ThreadTrack(Pid(), tid);
  // Lines sharing a display_id are meant to be shown as one thread; the
  // first one names it.
  if (named_tids_.insert(tid_num).second) {
    sink_->SetThreadName(Pid(), tid,
                         line.display_name.empty() ? line.name
                                                   : line.display_name);
    sink_->SetThreadSortIndex(Pid(), tid, order);
  }
  const uint32_t cat = sink_->Intern(line.name);
  for (const EventView& event : plane_.EventsOf(line)) {
    if (absl::Status s = EmitSlice(line, event, track, cat); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void PlaneEmitter::BuildArgs(const MetaInfo& meta, Stats stats) {
  args_.clear();
  args_.push_back('{');
  const auto separate = [&] {
    if (args_.size() > 1) args_.push_back(',');
  };
  if (meta.long_name_member.size > 0) {
    separate();
    args_.append(Text(meta.long_name_member));
  }
  for (uint32_t m = meta.members_begin; m < meta.members_end; ++m) {
    const MetaMember& member = meta_members_[m];
    // An event stat with the same key overrides the metadata's default.
    bool overridden = false;
    for (const StatView& s : stats) overridden |= s.metadata_id == member.stat_id;
    if (overridden) continue;
    separate();
    args_.append(Text(member.text));
  }
  for (size_t i = 0; i < stats.size(); ++i) {
    separate();
    args_.append(event_keys_[i]->json_key);
    AppendValue(stats[i]);
  }
  if (args_.size() == 1) {
    args_.clear();
  } else {
    args_.push_back('}');
  }
}

void PlaneEmitter::AppendValue(const StatView& stat) {
  if (stat.kind != xspace_wire::StatKind::kRef) {
    xspace_json::AppendStatValue(&args_, stat, plane_.stat_metadata);
    return;
  }
  auto [it, inserted] = ref_json_cache_.try_emplace(stat.uint64_value());
  if (inserted) {
    xspace_json::AppendStatValue(&it->second, stat, plane_.stat_metadata);
  }
  args_.append(it->second);
}

absl::Status PlaneEmitter::EmitSlice(const LineView& line,
                                     const EventView& event, uint32_t track,
                                     uint32_t cat) {
  if (event.data == EventView::Data::kNumOccurrences) {
    sink_->CountSkipped("xspace aggregated event");
    return absl::OkStatus();
  }
  const std::optional<int64_t> ts = StartPs(line, event);
  if (!ts) return absl::OkStatus();
  const MetaInfo& meta = Meta(event.metadata_id);
  if (meta.md == nullptr) ++missing_metadata_;

  const Stats stats = plane_.StatsOf(event);
  Event slice;
  slice.kind = EventKind::kSlice;
  slice.track = track;
  slice.ts = *ts;
  slice.dur = event.duration_ps;
  if (slice.dur < 0) {
    ++negative_durations_;
    slice.dur = 0;
  }
  slice.name = meta.name_id;
  slice.cat = cat;
  bool has_flow = false;
  // One lookup per stat; BuildArgs and EmitFlows use event_keys_.
  event_keys_.clear();
  for (const StatView& stat : stats) {
    const StatInfo& key = Stat(stat.metadata_id);
    event_keys_.push_back(&key);
    if (key.step_name) {
      slice.name =
          sink_->Intern(xspace_json::StatText(stat, plane_.stat_metadata));
    }
    has_flow |= key.flow;
  }
  BuildArgs(meta, stats);
  slice.args_json = args_;
  if (!args_.empty()) slice.flags |= kFlagHasArgs;
  if (absl::Status s = sink_->Add(slice); !s.ok()) return s;
  return has_flow ? EmitFlows(slice, stats) : absl::OkStatus();
}

absl::Status PlaneEmitter::EmitFlows(const Event& slice, Stats stats) {
  for (size_t i = 0; i < stats.size(); ++i) {
    if (!event_keys_[i]->flow) continue;
    const StatView& stat = stats[i];
    if (stat.kind == xspace_wire::StatKind::kUint64) {
      if (absl::Status s = EmitFlow(slice, stat.uint64_value()); !s.ok()) {
        return s;
      }
    } else if (stat.kind == xspace_wire::StatKind::kInt64) {
      if (absl::Status s = EmitFlow(slice, static_cast<uint64_t>(stat.int64_value()));
          !s.ok()) {
        return s;
      }
    } else {
      sink_->CountSkipped("xspace flow stat that is not an integer");
    }
  }
  return absl::OkStatus();
}

// `flow` packs direction (bits 0-1), id (bits 2-57) and category (58-63).
// The flow event sits at the slice's start on the slice's track and binds to
// the enclosing slice, i.e. to this one.
absl::Status PlaneEmitter::EmitFlow(const Event& slice, uint64_t flow) {
  constexpr uint64_t kIdMask = (uint64_t{1} << 56) - 1;
  const uint64_t direction = flow & 3;
  const uint64_t id = (flow >> 2) & kIdMask;
  const uint64_t category = flow >> 58;
  Event e;
  switch (direction) {
    case 1: e.kind = EventKind::kFlowEnd; break;
    case 2: e.kind = EventKind::kFlowStart; break;
    case 3: e.kind = EventKind::kFlowStep; break;
    default:
      sink_->CountSkipped("xspace flow stat without a direction");
      return absl::OkStatus();
  }
  e.track = slice.track;
  e.ts = slice.ts;
  e.name = slice.name;
  // Both ends of a flow sit on different lines (different slice cats); the
  // flow's own category is what they share.
  auto [it, inserted] = flow_cat_cache_.try_emplace(category);
  if (inserted) it->second = sink_->Intern(absl::StrCat("xspace.flow.", category));
  e.cat = it->second;
  e.flags = kFlagBindEnclosing;
  e.flow_id = sink_->InternId(absl::StrCat(id));
  return sink_->Add(e);
}

// The counter value: the first numeric stat of the event, else of its
// metadata.
std::optional<int64_t> PlaneEmitter::FindCounterValue(const MetaInfo& meta,
                                                      Stats stats,
                                                      double* value) const {
  for (const StatView& stat : stats) {
    if (xspace_json::StatNumber(stat, value)) return stat.metadata_id;
  }
  if (meta.md != nullptr) {
    for (const StatView& stat : plane_.StatsOf(*meta.md)) {
      if (xspace_json::StatNumber(stat, value)) return stat.metadata_id;
    }
  }
  return std::nullopt;
}

absl::Status PlaneEmitter::EmitCounterLine(const LineView& line) {
  const uint32_t cat = sink_->Intern(line.name);
  for (const EventView& event : plane_.EventsOf(line)) {
    if (event.data == EventView::Data::kNumOccurrences) {
      sink_->CountSkipped("xspace aggregated event");
      continue;
    }
    const MetaInfo& meta = Meta(event.metadata_id);
    if (meta.md == nullptr) ++missing_metadata_;
    double value = 0;
    const std::optional<int64_t> stat_id =
        FindCounterValue(meta, plane_.StatsOf(event), &value);
    if (!stat_id) {
      sink_->CountSkipped("xspace counter sample without a numeric stat");
      continue;
    }
    const std::optional<int64_t> ts = StartPs(line, event);
    if (!ts) continue;
    const std::string& series = Stat(*stat_id).name;
    Event sample;
    sample.kind = EventKind::kCounter;
    sample.track = sink_->CounterTrack(Pid(), Text(meta.name), series);
    sample.ts = *ts;
    sample.name = sink_->Intern(series);
    sample.cat = cat;
    sample.value = value;
    if (absl::Status s = sink_->Add(sample); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace tracetable::xspace_internal
