#include "tests/xspace/collecting_sink.h"

#include "absl/strings/str_cat.h"

namespace tracetable::testing {
namespace {

std::string Text(IdToken t) { return std::string(t.text); }

// About +-100 days in ns, the range the builder promises.
constexpr int64_t kMaxSpanNs = int64_t{100} * 86400 * 1000000000;

}  // namespace

void CollectingSink::BeginInput(std::string_view p, std::string_view h) {
  ++begin_calls;
  path = std::string(p);
  host = std::string(h);
}

uint32_t CollectingSink::Intern(std::string_view s) {
  auto [it, inserted] =
      string_ids_.try_emplace(std::string(s), static_cast<uint32_t>(strings_.size()));
  if (inserted) strings_.emplace_back(s);
  return it->second;
}

absl::StatusOr<int64_t> CollectingSink::ToRelativePs(int64_t abs_ns,
                                                     int32_t sub_ns_ps) {
  if (sub_ns_ps < 0 || sub_ns_ps > 999) {
    return absl::InvalidArgumentError(absl::StrCat("sub_ns_ps ", sub_ns_ps));
  }
  if (!origin_ns) origin_ns = abs_ns;
  const __int128 delta = static_cast<__int128>(abs_ns) - *origin_ns;
  if (delta > kMaxSpanNs || delta < -kMaxSpanNs) {
    return absl::OutOfRangeError(absl::StrCat("time ", abs_ns, " ns too far from origin"));
  }
  return static_cast<int64_t>(delta * 1000 + sub_ns_ps);
}

uint32_t CollectingSink::TrackId(const Track& t) {
  std::vector<std::string> key = {t.is_counter ? "C" : "T", t.pid, t.tid,
                                  t.counter, t.series};
  auto [it, inserted] =
      track_ids_.try_emplace(key, static_cast<uint32_t>(tracks.size()));
  if (inserted) tracks.push_back(t);
  return it->second;
}

uint32_t CollectingSink::ThreadTrack(IdToken pid, IdToken tid) {
  return TrackId(Track{false, Text(pid), Text(tid), "", ""});
}

uint32_t CollectingSink::CounterTrack(IdToken pid, std::string_view counter,
                                      std::string_view series) {
  return TrackId(
      Track{true, Text(pid), "", std::string(counter), std::string(series)});
}

uint32_t CollectingSink::AsyncTrack(IdToken pid, std::string_view name) {
  return TrackId(Track{false, Text(pid), absl::StrCat("async:", std::string(name)), "", ""});
}

uint32_t CollectingSink::InstantTrack(IdToken pid, bool global) {
  return TrackId(Track{false, global ? std::string() : Text(pid), global ? "instants:global" : "instants", "", ""});
}

void CollectingSink::SetProcessName(IdToken pid, std::string_view name) {
  process_names[Text(pid)] = std::string(name);
}
void CollectingSink::SetProcessSortIndex(IdToken pid, int64_t index) {
  process_sort[Text(pid)] = index;
}
void CollectingSink::AddProcessLabel(IdToken pid, std::string_view label) {
  process_labels[Text(pid)].emplace_back(label);
}
void CollectingSink::SetThreadName(IdToken pid, IdToken tid,
                                   std::string_view name) {
  thread_names[{Text(pid), Text(tid)}] = std::string(name);
}
void CollectingSink::SetThreadSortIndex(IdToken pid, IdToken tid,
                                        int64_t index) {
  thread_sort[{Text(pid), Text(tid)}] = index;
}
void CollectingSink::SetInputField(std::string_view key, std::string_view json) {
  input_fields[std::string(key)] = std::string(json);
}

absl::Status CollectingSink::Add(const Event& event) {
  if (fail_after && events.size() >= *fail_after) return fail_with;
  Stored s;
  s.event = event;
  s.name = strings_.at(event.name);
  s.cat = strings_.at(event.cat);
  s.flow_id = IsNumericFlowId(event.flow_id) ? NumericFlowIdText(event.flow_id) : strings_.at(event.flow_id);
  s.args = std::string(event.args_json);
  s.event.args_json = {};  // the reader's buffer is reused; keep our copy only
  events.push_back(std::move(s));
  return absl::OkStatus();
}

void CollectingSink::CountSkipped(std::string_view reason, uint64_t n) {
  skipped[std::string(reason)] += n;
}

void CollectingSink::Warn(std::string_view message) {
  warnings.emplace_back(message);
}

}  // namespace tracetable::testing
