// MemoryProfileBuilder: the ingest stage that turns memory events into a
// memory profile (docs/format.md, "Memory profile"), beside the table
// builder, which feeds it every event whose name marks a memory event.
//
// Contract:
//  - Recognised events: Kineto "[memory]" instants (args "Device Type",
//    "Device Id", "Addr", "Bytes" < 0 = free, optional "Total Allocated",
//    "Total Reserved") and XSpace "MemoryAllocation" / "MemoryDeallocation"
//    (stats allocator_name, bytes_allocated, bytes_reserved, bytes_available,
//    fragmentation, requested_bytes, allocation_bytes, addr, tf_op,
//    region_type, data_type, tensor_shape or shape, step_id: whichever are
//    present).
//    The events themselves are stored as usual by the table builder; this
//    stage only derives. A memory event whose args cannot be read is counted
//    (CountSkipped), never guessed at.
//  - Memory IDs are (input, allocator or device): one set per host.
//  - Finish() orders each ID's events by (ts, read order), derives the in-use
//    curve (the reported total when the event has one, else a running sum
//    from the last reported total), pairs allocations with frees by address
//    (the latest live allocation at that address), emits counter samples
//    through `Output::add_counter`, writes the segments (keys "Y") through
//    `Output::put`, and fills proto::MemoryProfile.
//  - Memory: raw records go through an external sorter (bounded by
//    `max_records`, raised when `grow` allows), and so do the frees while Finish pairs them; the
//    in-use curve and the allocations wait in files until their segments
//    are written. Finish holds one segment and the allocations live at
//    once, whatever the number of events. Spill files are named from
//    `spill_prefix`.
#ifndef TRACETABLE_STORE_MEMORY_PROFILE_BUILDER_H_
#define TRACETABLE_STORE_MEMORY_PROFILE_BUILDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/event.h"
#include "format/tracetable.pb.h"
#include "store/event_sink.h"
#include "store/external_sorter.h"

namespace tracetable {

// One memory event as the stage keeps it until Finish (trivially copyable
// for the external sorter).
struct MemoryRecord {
  static constexpr int64_t kNone = INT64_MIN;
  uint32_t memory_id = 0;  // index into the profile's ids
  uint8_t op = 0;          // 1 alloc, 2 free, 0 neither (0 bytes)
  uint8_t has_addr = 0;
  int64_t ts = 0;
  uint64_t event_id = 0;   // read order: ties at one ts keep it
  uint64_t addr = 0;
  int64_t bytes = 0;       // size allocated or freed (> 0), kNone if unknown
  int64_t requested = kNone;
  int64_t in_use = kNone;  // reported total after the event
  int64_t reserved = kNone;
  int64_t available = kNone;
  double fragmentation = 0;
  bool has_fragmentation = false;
  int64_t step = kNone;
  uint32_t tf_op = 0, shape = 0, data_type = 0, region = 0;  // string ids
};

class MemoryProfileBuilder {
 public:
  // What Finish needs from the table builder.
  struct Output {
    // A new counter track of `process`; returns its id.
    std::function<uint32_t(uint32_t process, std::string_view counter, std::string_view series)>
        new_counter_track;
    // One counter sample (name = the interned series).
    std::function<absl::Status(uint32_t track, uint32_t name, int64_t ts, double value)> add_counter;
    std::function<absl::Status(std::string key, std::string value)> put;
  };

  // Asked when the raw records fill their limit: how many more records may
  // be held in memory (0: a run is spilled, as at `max_records`). The
  // sorter reserves room for `reserve_records` (not touched until filled),
  // which bounds what it may be given.
  using GrowFn = std::function<absl::StatusOr<size_t>()>;
  MemoryProfileBuilder(std::string spill_prefix, size_t max_records, size_t reserve_records = 0,
                       GrowFn grow = nullptr);

  // Called by the builder for each newly interned string; remembers the ids
  // of the memory event names so that IsMemoryEvent is a compare.
  void NoteString(uint32_t id, std::string_view s);
  bool IsMemoryEvent(const Event& e) const {
    return e.name != 0 && (e.name == kineto_name_ || e.name == alloc_name_ || e.name == free_name_);
  }

  // Reads one memory event. `sink` interns strings and counts what cannot be
  // used. Fails only when the sorter fails to spill.
  absl::Status Observe(const Event& e, uint64_t event_id, uint32_t process, uint32_t input,
                       std::string_view host, EventSink* sink);

  absl::Status Finish(size_t read_budget, EventSink* sink, const Output& out,
                      proto::MemoryProfile* profile);

  // Unpaired events over all IDs (for the ingest's closing report).
  static std::string UnpairedSummary(const proto::MemoryProfile& profile);

 private:
  uint32_t IdFor(uint32_t input, uint32_t process, std::string_view host, std::string name,
                 std::string_view source);

  uint32_t kineto_name_ = 0, alloc_name_ = 0, free_name_ = 0;
  std::string spill_prefix_;
  size_t max_records_;
  std::unique_ptr<ExternalSorter<MemoryRecord>> records_;
  GrowFn grow_;
  proto::MemoryProfile ids_;  // ids and their identity; the rest is filled at Finish
  absl::flat_hash_map<std::string, uint32_t> id_index_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_MEMORY_PROFILE_BUILDER_H_
