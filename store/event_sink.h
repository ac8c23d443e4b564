// EventSink: what a reader (ingest/) hands its events to. The table builder
// implements it; tests implement it to collect events.
//
// Contract:
//  - Not thread-safe: one reader calls one sink at a time.
//  - A reader calls BeginInput once per input file, before anything else for
//    that file. Process and thread identities are scoped to that input.
//  - Strings passed as string_view are copied before the call returns.
//  - Add() may fail (e.g. spilling to disk failed); the reader stops and
//    returns that status.
//  - Nothing is dropped silently: a reader that skips something calls
//    CountSkipped (counted per reason, reported in the table's metadata) or
//    Warn.
#ifndef TRACETABLE_STORE_EVENT_SINK_H_
#define TRACETABLE_STORE_EVENT_SINK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/event.h"
#include "format/flow_id.h"

namespace tracetable {

// A pid or tid as the input spells it. Chrome JSON allows numbers and strings;
// the answer gives them back in the same form.
struct IdToken {
  std::string_view text;  // decimal digits (maybe with '-') when is_number
  bool is_number = true;
};

class EventSink {
 public:
  virtual ~EventSink() = default;

  // `host` names the machine the input came from; empty for a plain trace.
  virtual void BeginInput(std::string_view path, std::string_view host) = 0;

  // Returns the id of `s` in the table's string table (0 for "").
  virtual uint32_t Intern(std::string_view s) = 0;

  // The id of a flow id or async match key (millions in a Kineto trace): a
  // decimal number's numeric flow id (format/flow_id.h), interning nothing;
  // else Intern's id, though a sink may keep no cache entry for it. Async
  // keys are never numbers (they hold '|').
  virtual uint32_t InternId(std::string_view s) {
    if (std::optional<uint32_t> n = NumericFlowId(s)) return *n;
    return Intern(s);
  }

  // A hint that Intern(s) may come soon: a sink whose lookup misses the
  // cache may start loading what it will touch. Changes no answer; may be
  // wrong or ignored.
  virtual void PrefetchIntern(std::string_view /*s*/) {}

  // Converts an absolute time (nanoseconds plus 0..999 picoseconds) to
  // picoseconds relative to the table origin. The first call fixes the origin.
  // Fails when the time is too far (about +-100 days) from the origin to be
  // held in 64-bit picoseconds.
  virtual absl::StatusOr<int64_t> ToRelativePs(int64_t abs_ns,
                                               int32_t sub_ns_ps) = 0;

  // Track ids. Creating a thread or counter track creates its process.
  virtual uint32_t ThreadTrack(IdToken pid, IdToken tid) = 0;
  // One counter series: `counter` is the C event's name (with its id, if any,
  // appended as " [id]"), `series` the arg key.
  virtual uint32_t CounterTrack(IdToken pid, std::string_view counter,
                                std::string_view series) = 0;
  // The track handle for async (b/n/e) events of one process and name. The
  // builder decides their track once they are paired: a nest (an id's
  // outermost slice and the slices of its id paired inside it) lives on the
  // track of its outermost slice's name, and a name that never starts a
  // nest gets no track.
  virtual uint32_t AsyncTrack(IdToken pid, std::string_view name) = 0;
  // Instants not of one thread, as Perfetto shows them: those scoped to
  // pid's process ("s":"p"), or with `global` to the whole input ("s":"g";
  // pid is ignored).
  virtual uint32_t InstantTrack(IdToken pid, bool global) = 0;

  // Metadata (M events and the like).
  virtual void SetProcessName(IdToken pid, std::string_view name) = 0;
  virtual void SetProcessSortIndex(IdToken pid, int64_t index) = 0;
  virtual void AddProcessLabel(IdToken pid, std::string_view label) = 0;
  virtual void SetThreadName(IdToken pid, IdToken tid,
                             std::string_view name) = 0;
  virtual void SetThreadSortIndex(IdToken pid, IdToken tid, int64_t index) = 0;

  // Top-level fields of the input kept as raw JSON (displayTimeUnit,
  // otherData, metadata, ...).
  virtual void SetInputField(std::string_view key, std::string_view json) = 0;

  virtual absl::Status Add(const Event& event) = 0;

  // Something in the input that is not stored, by reason (e.g. "phase 'P'",
  // "E without matching B" is counted by the builder itself).
  virtual void CountSkipped(std::string_view reason, uint64_t n = 1) = 0;
  virtual void Warn(std::string_view message) = 0;
};

// For sinks that only look at events and tracks (the origin probe, parse
// benchmarks): process and thread metadata and input fields are dropped.
class MetadataDroppingSink : public EventSink {
 public:
  void SetProcessName(IdToken, std::string_view) override {}
  void SetProcessSortIndex(IdToken, int64_t) override {}
  void AddProcessLabel(IdToken, std::string_view) override {}
  void SetThreadName(IdToken, IdToken, std::string_view) override {}
  void SetThreadSortIndex(IdToken, IdToken, int64_t) override {}
  void SetInputField(std::string_view, std::string_view) override {}
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_EVENT_SINK_H_
