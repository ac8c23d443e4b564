// CollectingSink: an EventSink for tests that keeps everything it is given,
// with strings resolved, so tests can assert on what a reader produced.
#ifndef TRACETABLE_TESTS_CHROME_JSON_COLLECTING_SINK_H_
#define TRACETABLE_TESTS_CHROME_JSON_COLLECTING_SINK_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/event_sink.h"

namespace tracetable::testing_sink {

// One event as added, with interned ids resolved to their strings.
struct Collected {
  Event event;          // args_json points into `args` below
  std::string track;    // the key of event.track (see TrackKey)
  std::string name, cat, flow_id, flow_in, flow_out, args;
};

class CollectingSink : public EventSink {
 public:
  // "n:12" for numbers, "s:main" for strings.
  static std::string Id(IdToken t) {
    return std::string(t.is_number ? "n:" : "s:") + std::string(t.text);
  }

  void BeginInput(std::string_view path, std::string_view host) override {
    ++begin_calls;
    this->path = std::string(path);
    this->host = std::string(host);
  }
  uint32_t Intern(std::string_view s) override {
    if (s.empty()) return 0;
    auto [it, inserted] = ids_.try_emplace(std::string(s), strings.size());
    if (inserted) strings.emplace_back(s);
    return it->second;
  }
  absl::StatusOr<int64_t> ToRelativePs(int64_t abs_ns, int32_t sub_ns_ps) override {
    if (!origin_ns) origin_ns = abs_ns;
    __int128 d = static_cast<__int128>(abs_ns) - *origin_ns;
    constexpr __int128 kLimit = static_cast<__int128>(100) * 86400 * 1000000000;
    if (d > kLimit || d < -kLimit) {
      return absl::OutOfRangeError("time too far from the origin");
    }
    return static_cast<int64_t>(d * 1000 + sub_ns_ps);
  }
  uint32_t ThreadTrack(IdToken pid, IdToken tid) override {
    ++thread_track_calls;
    return Track("thread " + Id(pid) + " " + Id(tid));
  }
  uint32_t CounterTrack(IdToken pid, std::string_view counter,
                        std::string_view series) override {
    return Track("counter " + Id(pid) + " " + std::string(counter) + " / " +
                 std::string(series));
  }
  uint32_t AsyncTrack(IdToken pid, std::string_view name) override {
    return Track("async " + Id(pid) + " " + std::string(name));
  }
  uint32_t InstantTrack(IdToken pid, bool global) override {
    return Track(global ? std::string("instants global") : "instants " + Id(pid));
  }
  void SetProcessName(IdToken pid, std::string_view name) override {
    process_names[Id(pid)] = std::string(name);
  }
  void SetProcessSortIndex(IdToken pid, int64_t index) override {
    process_sort[Id(pid)] = index;
  }
  void AddProcessLabel(IdToken pid, std::string_view label) override {
    process_labels[Id(pid)].emplace_back(label);
  }
  void SetThreadName(IdToken pid, IdToken tid, std::string_view name) override {
    thread_names[Id(pid) + " " + Id(tid)] = std::string(name);
  }
  void SetThreadSortIndex(IdToken pid, IdToken tid, int64_t index) override {
    thread_sort[Id(pid) + " " + Id(tid)] = index;
  }
  void SetInputField(std::string_view key, std::string_view json) override {
    fields[std::string(key)] = std::string(json);
  }
  absl::Status Add(const Event& e) override {
    if (fail_after && events.size() >= *fail_after) {
      return absl::ResourceExhaustedError("sink full");
    }
    Collected c;
    c.event = e;
    c.track = tracks.at(e.track);
    c.name = strings.at(e.name);
    c.cat = strings.at(e.cat);
    c.flow_id = IsNumericFlowId(e.flow_id) ? NumericFlowIdText(e.flow_id) : strings.at(e.flow_id);
    c.flow_in = IsNumericFlowId(e.flow_in) ? NumericFlowIdText(e.flow_in) : strings.at(e.flow_in);
    c.flow_out = IsNumericFlowId(e.flow_out) ? NumericFlowIdText(e.flow_out) : strings.at(e.flow_out);
    c.args = std::string(e.args_json);
    c.event.args_json = {};
    events.push_back(std::move(c));
    return absl::OkStatus();
  }
  void CountSkipped(std::string_view reason, uint64_t n) override {
    skipped[std::string(reason)] += n;
  }
  void Warn(std::string_view message) override {
    warnings.emplace_back(message);
  }

  uint64_t SkippedTotal() const {
    uint64_t n = 0;
    for (const auto& [k, v] : skipped) n += v;
    return n;
  }
  // Absolute time of a relative one, in picoseconds.
  __int128 AbsPs(int64_t rel) const {
    return static_cast<__int128>(*origin_ns) * 1000 + rel;
  }

  int begin_calls = 0;
  int thread_track_calls = 0;
  std::string path, host;
  std::vector<std::string> strings{""};
  std::vector<std::string> tracks;
  std::optional<int64_t> origin_ns;
  std::vector<Collected> events;
  std::map<std::string, std::string> process_names, thread_names, fields;
  std::map<std::string, int64_t> process_sort, thread_sort;
  std::map<std::string, std::vector<std::string>> process_labels;
  std::map<std::string, uint64_t> skipped;
  std::vector<std::string> warnings;
  std::optional<size_t> fail_after;

 private:
  uint32_t Track(const std::string& key) {
    auto [it, inserted] = track_ids_.try_emplace(key, tracks.size());
    if (inserted) tracks.push_back(key);
    return it->second;
  }
  absl::flat_hash_map<std::string, uint32_t> ids_;
  absl::flat_hash_map<std::string, uint32_t> track_ids_;
};

}  // namespace tracetable::testing_sink

#endif  // TRACETABLE_TESTS_CHROME_JSON_COLLECTING_SINK_H_
