// EventParser: turns Trace Event JSON objects (the text of one element of
// "traceEvents") into EventSink calls.
//
// Contract:
//  - Parse() validates the whole object (syntax, UTF-8, escapes, number
//    ranges) with simdjson On-Demand, parsing in place: the text must be
//    followed by readable bytes up to `alloc_end` (>= 64 of them).
//  - Times are read from the numbers' text (never through double) with
//    ParseMicros, then made relative with sink->ToRelativePs.
//  - Phase mapping (see format/event.h): X slice; B/E begin/end; i/I/R
//    instant with scope flags; C one counter sample per numeric arg; M
//    process/thread names, sort indexes and labels; s/t/f flows; b/n/e and
//    legacy S/T/p/F async with a match key from cat + id + scope. Anything
//    else is counted with CountSkipped, never fatal.
//  - Errors name the file, the byte offset in the stream and what was
//    expected (see input_error.h). An error in the event's own content
//    (broken JSON inside it, a bad time, nesting deeper than kMaxNesting)
//    also sets error_reason(), so the reader can skip just that event;
//    sink failures leave it empty.
#ifndef TRACETABLE_INGEST_CHROME_JSON_EVENT_PARSER_H_
#define TRACETABLE_INGEST_CHROME_JSON_EVENT_PARSER_H_

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/time.h"
#include "ingest/chrome_json/input_error.h"
#include "ingest/chrome_json/lookup_cache.h"
#include "store/event_sink.h"

namespace tracetable::chrome_json {

// ParseMicros with a fast path for plain "digits[.digits]" text (almost
// every ts and dur). Same results as ParseMicros for every input.
absl::StatusOr<NsPs> ParseMicrosText(std::string_view text);
// The fast path alone: nullopt when the text needs the general parser.
std::optional<NsPs> FastMicros(std::string_view text);

class EventParser {
 public:
  EventParser(EventSink* sink, const InputErrorContext* errors);

  // Parses the object text [p, p + n) whose first byte is at stream offset
  // `offset` and emits what it describes.
  absl::Status Parse(const char* p, size_t n, const char* alloc_end,
                     uint64_t offset);

  // Parses a run of elements of the traceEvents array at once: [p, p + n)
  // is "[" element, element, ... "]" (the reader brackets the run in place),
  // offset is the stream offset of p[0]. Objects are events; other elements
  // are validated and counted as skipped. On a JSON syntax or encoding
  // error it returns OK and sets *resume to the end of the last element it
  // emitted (p + 1 if none): the reader rereads from there one event at a
  // time, which reports the error precisely. Otherwise *resume is null.
  absl::Status ParseBatch(const char* p, size_t n, const char* alloc_end,
                          uint64_t offset, const char** resume);

  // Reports what was accumulated over the input (e.g. X events without dur)
  // with Warn. Call once at the end.
  void Finish();

  uint64_t events_added() const { return events_added_; }
  // 'X' events without dur so far; Finish reports them with those added
  // here (counted by the parsers of other threads, ingest/chrome_json/parallel_runs.h).
  uint64_t x_without_dur() const { return x_without_dur_; }
  void AddXWithoutDur(uint64_t n) { x_without_dur_ += n; }

  // After a failed Parse: why the event itself is bad ("event with broken
  // JSON", ...), the reason it is counted under when skipped; empty when the
  // failure is not the event's fault (the sink's).
  std::string_view error_reason() const { return error_reason_; }

  // Values nested deeper than this inside one event are an error of that
  // event (the validation walk recurses; this bounds its stack).
  static constexpr int kMaxNesting = 1024;  // as for the whole document (json_scan)

  // A field of an event whose value is a time (ts, dur, ...): its text and
  // where it is, for messages.
  struct TimeField {
    std::string_view text;
    const char* at = nullptr;
    bool present = false;
    bool parsed = false;  // `value` already holds the parsed text
    NsPs value;
  };
  // The fields of one event that the mapping needs. Views point into the
  // input or into the parser's string buffer; valid until the next Parse.
  struct RawEvent {
    std::string_view ph;
    std::string_view name, cat;
    TimeField ts, dur, tdur, tts;
    IdToken pid{"0", true};
    IdToken tid{"0", true};
    bool has_tid = false;  // without one, the thread is the pid's main thread
    std::string_view id, id2_global, id2_local, bind_id;
    bool has_id = false, has_id2_global = false, has_id2_local = false;
    bool has_bind_id = false;
    bool flow_in = false, flow_out = false;
    std::string_view s, bp, scope;
    std::string_view args;  // raw text of an object-valued "args"
    const char* at = nullptr;  // the event's first byte
  };

 private:
  using Ondemand = simdjson::ondemand::value;

  absl::Status ParseObject(simdjson::ondemand::object& obj, const char* at,
                           simdjson::ondemand::document& doc);

  // Field readers: each validates the value it consumes.
  absl::Status ReadField(simdjson::ondemand::field& field, RawEvent& ev);
  absl::Status ReadText(Ondemand& v, std::string_view* out);
  absl::Status ReadId(Ondemand& v, std::string_view* out, bool* is_number);
  absl::Status ReadTime(Ondemand& v, std::string_view key, TimeField* out);
  absl::Status ReadId2(Ondemand& v, RawEvent& ev);
  absl::Status ReadArgs(Ondemand& v, RawEvent& ev);
  absl::Status ReadBool(Ondemand& v, bool* out);
  // Validates a value nobody reads (unknown fields, args contents).
  absl::Status Skim(Ondemand& v, int depth);

  // Phase handlers.
  absl::Status Emit(const RawEvent& ev);
  // In a batch, before emitting an event: finds the next element's "name"
  // text (raw, unescaped only) and hints it to the sink, so that its lookup
  // overlaps this event's emission and the next one's parse.
  void HintNextName(simdjson::ondemand::document& doc);
  // The fields every event on a thread track has (time, track, names, args);
  // instants scoped "g"/"p" (by `flags`) go to their InstantTrack instead.
  absl::StatusOr<Event> ThreadEvent(const RawEvent& ev, EventKind kind, uint32_t flags);
  absl::Status EmitOnThread(const RawEvent& ev, EventKind kind, uint32_t flags);
  absl::Status EmitSlice(const RawEvent& ev);
  absl::Status EmitCounters(const RawEvent& ev);
  absl::Status EmitMetadata(const RawEvent& ev);
  // The args of an M event that the sink setters take.
  struct MetadataArgs {
    std::optional<std::string_view> name, labels;
    std::optional<int64_t> sort_index;
  };
  absl::StatusOr<MetadataArgs> ReadMetadataArgs(const RawEvent& ev);
  absl::Status EmitFlow(const RawEvent& ev, EventKind kind);
  absl::Status EmitAsync(const RawEvent& ev, EventKind kind, bool legacy);
  absl::Status Add(const Event& e);

  // Times.
  absl::StatusOr<int64_t> RelativeTime(const TimeField& f, std::string_view key);
  absl::StatusOr<int64_t> DurationPs(const TimeField& f, std::string_view key);
  // tts/tdur into e->tts/tdur/thread_time (ps, the thread's own clock).
  absl::Status ThreadTimes(const RawEvent& ev, Event* e);

  uint32_t ThreadTrackFor(const RawEvent& ev);
  // The event's id as one string: id, id2.global, or pid-scoped id2.local.
  bool IdKey(const RawEvent& ev, std::string* out) const;
  std::string_view ArgsJson(const RawEvent& ev) const;
  absl::StatusOr<simdjson::ondemand::object> ParseArgs(const RawEvent& ev);

  // Errors at a position inside the current event.
  uint64_t OffsetOf(const char* at) const;
  absl::Status ErrorAt(const char* at, std::string_view expected,
                       std::string_view got) const;
  // ErrorAt for a time field that is not a usable number.
  absl::Status TimeError(const char* at, std::string_view expected,
                         std::string_view got) const;
  absl::Status SimdError(simdjson::error_code err, const char* at) const;

  EventSink* sink_;
  const InputErrorContext* errors_;
  simdjson::ondemand::parser parser_;       // the event
  simdjson::ondemand::parser args_parser_;  // args of C and M, re-read
  simdjson::ondemand::document args_doc_;
  simdjson::ondemand::document* doc_ = nullptr;  // the one being read
  const char* text_ = nullptr;   // current event text
  size_t text_len_ = 0;
  const char* alloc_end_ = nullptr;
  uint64_t offset_ = 0;          // stream offset of text_[0]
  // In ParseBatch, JSON errors only mark the batch for a careful reread.
  bool batch_mode_ = false;
  mutable bool batch_json_error_ = false;
  mutable const char* error_reason_ = "";

  InternCache strings_;
  ThreadTrackCache threads_;

  std::string key_buf_;  // scratch for match keys and counter names
  uint64_t events_added_ = 0;
  uint64_t x_without_dur_ = 0;
};

}  // namespace tracetable::chrome_json

#endif  // TRACETABLE_INGEST_CHROME_JSON_EVENT_PARSER_H_
