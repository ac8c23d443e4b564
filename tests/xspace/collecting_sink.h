// An EventSink for tests: keeps every call so tests can assert on what a
// reader produced. Interning, track ids and the time origin behave like the
// real builder's contract (store/event_sink.h): id 0 is "", the first
// ToRelativePs call fixes the origin, +-100 days is the representable range.
#ifndef TRACETABLE_TESTS_XSPACE_COLLECTING_SINK_H_
#define TRACETABLE_TESTS_XSPACE_COLLECTING_SINK_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "store/event_sink.h"

namespace tracetable::testing {

class CollectingSink : public EventSink {
 public:
  struct Track {
    bool is_counter = false;
    std::string pid;
    std::string tid;       // thread tracks
    std::string counter;   // counter tracks
    std::string series;
  };
  // An event with its strings resolved, so tests compare text, not ids.
  struct Stored {
    Event event;  // args_json points into `args`
    std::string name;
    std::string cat;
    std::string flow_id;
    std::string args;
  };

  void BeginInput(std::string_view path, std::string_view host) override;
  uint32_t Intern(std::string_view s) override;
  absl::StatusOr<int64_t> ToRelativePs(int64_t abs_ns,
                                       int32_t sub_ns_ps) override;
  uint32_t ThreadTrack(IdToken pid, IdToken tid) override;
  uint32_t CounterTrack(IdToken pid, std::string_view counter,
                        std::string_view series) override;
  uint32_t AsyncTrack(IdToken pid, std::string_view name) override;
  uint32_t InstantTrack(IdToken pid, bool global) override;
  void SetProcessName(IdToken pid, std::string_view name) override;
  void SetProcessSortIndex(IdToken pid, int64_t index) override;
  void AddProcessLabel(IdToken pid, std::string_view label) override;
  void SetThreadName(IdToken pid, IdToken tid, std::string_view name) override;
  void SetThreadSortIndex(IdToken pid, IdToken tid, int64_t index) override;
  void SetInputField(std::string_view key, std::string_view json) override;
  absl::Status Add(const Event& event) override;
  void CountSkipped(std::string_view reason, uint64_t n) override;
  void Warn(std::string_view message) override;

  const std::string& String(uint32_t id) const { return strings_.at(id); }

  // Add() returns `fail_with` once `fail_after` events were accepted.
  std::optional<size_t> fail_after;
  absl::Status fail_with = absl::ResourceExhaustedError("sink is full");

  int begin_calls = 0;
  std::string path;
  std::string host;
  std::optional<int64_t> origin_ns;
  std::vector<Track> tracks;
  std::vector<Stored> events;
  std::map<std::string, std::string> process_names;
  std::map<std::string, int64_t> process_sort;
  std::map<std::string, std::vector<std::string>> process_labels;
  std::map<std::pair<std::string, std::string>, std::string> thread_names;
  std::map<std::pair<std::string, std::string>, int64_t> thread_sort;
  std::map<std::string, std::string> input_fields;
  std::map<std::string, uint64_t> skipped;
  std::vector<std::string> warnings;

 private:
  uint32_t TrackId(const Track& t);

  std::vector<std::string> strings_{""};
  absl::flat_hash_map<std::string, uint32_t> string_ids_{{"", 0}};
  std::map<std::vector<std::string>, uint32_t> track_ids_;
};

}  // namespace tracetable::testing

#endif  // TRACETABLE_TESTS_XSPACE_COLLECTING_SINK_H_
