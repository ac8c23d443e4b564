// The top level of a Chrome trace: array or object form, the traceEvents
// array (possibly cut off), and the other top-level fields. Nothing but one
// chunk and the value being read is held in memory.
//
// Events take one of two paths:
//  - fast: ScanCompleteElements finds the run of events that is complete in
//    the window; the run is bracketed as "[...]" in place and parsed as one
//    simdjson document (one stage-1 pass instead of one per event);
//  - careful: one event at a time, its extent found with ScanValue across
//    chunk refills. Used for an event cut by the window's end, for the end
//    of the input (truncation), and to reread a run that had a JSON error,
//    so that errors are always reported from here with exact offsets.
// With ReadOptions::parallel, the runs the fast path would parse are copied
// to worker threads instead (parallel_runs.h) once the input's first time is
// known; a run that stops at an error sends this reader back to the stop,
// from where it goes on as it would have (careful path up to the run's end).
#include "ingest/chrome_json/reader.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingest/chrome_json/byte_source.h"
#include "ingest/chrome_json/event_parser.h"
#include "ingest/chrome_json/input_error.h"
#include "ingest/chrome_json/input_window.h"
#include "ingest/chrome_json/json_scan.h"
#include "ingest/chrome_json/parallel_runs.h"
#include "ingest/chrome_json/str.h"

namespace tracetable {
namespace {

using chrome_json::ByteSource;
using chrome_json::Cat;
using chrome_json::EventParser;
using chrome_json::InputErrorContext;
using chrome_json::InputWindow;
using chrome_json::ParallelRuns;
using chrome_json::ScanState;

constexpr size_t kChunkBytes = size_t{4} << 20;
// One event larger than this is almost certainly an unbalanced quote or
// bracket, not data; stop before holding the rest of the file in memory.
constexpr size_t kMaxEventBytes = size_t{64} << 20;
// Fast-path batches of a parallel read before the input's first time.
constexpr size_t kBatchBeforeOrigin = size_t{64} << 10;
// Fast-path batches otherwise: about a parallel read's run
// (parallel_runs.cc). simdjson indexes a batch in ~6 bytes per byte, so a
// whole window (8 MiB) held 47 MB per reader: 190 MB for 4 shards built at
// once.
constexpr size_t kMaxBatchBytes = size_t{1} << 20;
// Top-level fields other than traceEvents are kept whole up to this size.
constexpr size_t kMaxFieldBytes = size_t{16} << 20;
constexpr size_t kMaxKeyBytes = size_t{1} << 20;
// A resynchronisation candidate (the element after a "}, {" boundary) must
// be whole valid JSON within this many bytes to be taken as the next event.
constexpr size_t kMaxCandidateBytes = size_t{1} << 20;
// Skipped events reported one by one (per input); the rest are only counted.
constexpr int kMaxSkipWarnings = 10;

class TopLevelReader {
 public:
  TopLevelReader(std::string path, ByteSource* source, EventSink* sink, const ReadOptions& opts)
      : path_(std::move(path)),
        source_(source),
        sink_(sink),
        parallel_(opts.parallel),
        strict_(opts.strict),
        errors_(source->errors()),
        window_(source, kChunkBytes),
        events_(sink, &errors_) {}

  absl::Status Run();

 private:
  enum class Extent { kComplete, kEof, kTooBig };

  // Moves pos_ to the next non-whitespace byte and returns it, or -1 at the
  // end of the input.
  absl::StatusOr<int> Peek();
  // Finds the end of the value starting at pos_, refilling the window as
  // needed (pos_ stays at the value's start, which may move). On kComplete
  // *end is one past the value.
  absl::StatusOr<Extent> FindExtent(size_t max_bytes, ScanState& st,
                                    size_t* end);
  // After kTooBig: drops the rest of the value without keeping it.
  absl::Status DiscardRest(ScanState& st);

  absl::Status ReadObjectForm();
  absl::Status ReadEventArray();
  absl::Status ReadEvent();
  // Reads the complete elements in the window from pos_ (at '{') as one
  // simdjson document; *need_value tells the caller what comes next.
  absl::Status ReadBatch(size_t len, bool* need_value);
  // Hands the runs of events from pos_ to parallel_ while they come one
  // after another, then waits for them; if one stopped at an error, moves
  // pos_ back to where it stopped (Rewind) for a reread one at a time.
  absl::Status DispatchRuns(bool* need_value);
  // Complete elements from pos_ (at '{') of about one run's size, refilling
  // as needed; 0 when the careful path must read what comes.
  absl::StatusOr<size_t> FindRun();
  // Reads the input again from stream offset `offset` (pos_ = 0 there).
  absl::Status Rewind(uint64_t offset);
  absl::Status ReadOtherElement();
  // nullopt when the input ends inside the key.
  absl::StatusOr<std::optional<std::string>> ReadKey();
  absl::Status ReadTopField(const std::string& key);
  // Checks a complete non-event value (grammar and UTF-8).
  absl::Status CheckValue(std::string_view text, uint64_t offset);
  // The input ended inside the value at pos_: fine if what is there is a
  // valid beginning of JSON, else a syntax error (of an event, when
  // `in_events`: then that event is skipped like any other bad one).
  absl::Status EndedInside(std::string_view what, std::string_view skip_reason,
                           bool in_events = false);
  // The input ended early (`message` says how): a warning, or with strict an
  // error.
  absl::Status Truncated(uint64_t offset, std::string_view message);
  // The element at pos_ failed with `error`. Unless strict (or the failure
  // is not the element's own, empty `reason`), counts it under `reason` and
  // moves pos_ past it: to `end` (its extent, when known) if a separator
  // follows, else to the next event boundary after `damage_at`.
  absl::Status SkipElement(const absl::Status& error, std::string_view reason,
                           std::optional<size_t> end, size_t damage_at);
  // Moves pos_ (from the damage) to the '{' of the next "}, {" boundary
  // whose element is whole valid JSON; false at the end of the input.
  absl::StatusOr<bool> Resync();
  // Whether the element at pos_ (a '{') reads as one valid JSON value with
  // a "ph" key, followed by ',' or ']' (or the end of the input).
  absl::StatusOr<bool> PlausibleElement();
  // Whether the ']' at pos_ reads as the end of the event array: followed
  // by the end of the input, the top-level '}', or ',' and a key.
  absl::StatusOr<bool> PlausibleArrayEnd();
  // Returns the byte `ahead` bytes past pos_ (refilling, which may move
  // pos_), or -1 past the end of the input.
  absl::StatusOr<int> ByteAhead(size_t ahead);
  absl::Status ExpectEnd();

  uint64_t Offset(size_t pos) const { return window_.base() + pos; }
  std::string GotAt(size_t pos) const {
    return pos < window_.size() ? chrome_json::DescribeByte(window_.data() + pos)
                                : "end of file";
  }
  absl::Status ErrorAt(size_t pos, std::string_view expected) const {
    return errors_.Error(Offset(pos), expected, GotAt(pos));
  }

  const std::string path_;
  ByteSource* source_;
  std::unique_ptr<ByteSource> reopened_;  // after a Rewind
  EventSink* sink_;
  ParallelRuns* parallel_;
  const bool strict_;
  InputErrorContext errors_;
  InputWindow window_;
  EventParser events_;
  simdjson::ondemand::parser key_parser_;
  size_t pos_ = 0;
  bool truncated_ = false;  // the input ended early; stop reading
  // SkipElement left pos_ at the next element (not after a separator).
  bool resynced_ = false;
  int skip_warnings_ = 0;
  // After a batch hit a JSON error, events up to this stream offset are read
  // one at a time (which reports the error with its exact position).
  uint64_t no_batch_before_ = 0;
};

absl::StatusOr<int> TopLevelReader::Peek() {
  while (true) {
    const char* d = window_.data();
    const size_t n = window_.size();
    while (pos_ < n && chrome_json::IsJsonSpace(d[pos_])) ++pos_;
    if (pos_ < n) return static_cast<unsigned char>(d[pos_]);
    absl::StatusOr<bool> more = window_.Refill(pos_);
    if (!more.ok()) return more.status();
    pos_ = 0;
    if (!*more) return -1;
  }
}

absl::StatusOr<TopLevelReader::Extent> TopLevelReader::FindExtent(
    size_t max_bytes, ScanState& st, size_t* end) {
  size_t scanned = pos_;
  while (true) {
    const size_t n = window_.size();
    size_t used = chrome_json::ScanValue(st, window_.data() + scanned, n - scanned);
    if (st.done) {
      *end = scanned + used;
      return Extent::kComplete;
    }
    if (n - pos_ > max_bytes) return Extent::kTooBig;
    // Keep the value's bytes; the scanner resumes where it stopped.
    absl::StatusOr<bool> more = window_.Refill(pos_);
    if (!more.ok()) return more.status();
    scanned = n - pos_;
    pos_ = 0;
    if (!*more) {
      if (st.scalar && window_.size() > 0) {  // a number ends at end of input
        *end = window_.size();
        return Extent::kComplete;
      }
      return Extent::kEof;
    }
  }
}

absl::Status TopLevelReader::DiscardRest(ScanState& st) {
  while (true) {
    absl::StatusOr<bool> more = window_.Refill(window_.size());
    if (!more.ok()) return more.status();
    pos_ = 0;
    if (!*more) {
      truncated_ = true;
      return absl::OkStatus();
    }
    size_t used = chrome_json::ScanValue(st, window_.data(), window_.size());
    if (st.done) {
      pos_ = used;
      return absl::OkStatus();
    }
  }
}

absl::Status TopLevelReader::Run() {
  absl::StatusOr<int> c = Peek();
  if (!c.ok()) return c.status();
  // A UTF-8 byte order mark is not JSON but some Windows tools write one.
  if (*c == 0xef && window_.size() - pos_ >= 3 &&
      std::string_view(window_.data() + pos_, 3) == "\xef\xbb\xbf") {
    pos_ += 3;
    c = Peek();
    if (!c.ok()) return c.status();
  }
  absl::Status s;
  if (*c < 0) {
    return errors_.Error(Offset(pos_), "a JSON array or object (a Chrome trace)",
                         Offset(pos_) == 0 ? "an empty file" : "only whitespace");
  } else if (*c == '[') {
    ++pos_;
    s = ReadEventArray();
  } else if (*c == '{') {
    ++pos_;
    s = ReadObjectForm();
  } else {
    return ErrorAt(pos_, "'[' or '{' starting a Chrome trace JSON document");
  }
  if (!s.ok()) return s;
  if (!truncated_) {
    if (s = ExpectEnd(); !s.ok()) return s;
  }
  if (source_->truncated()) {
    s = Truncated(Offset(window_.size()), "the gzip stream ends early (file cut off)");
    if (!s.ok()) return s;
  }
  if (parallel_ != nullptr) events_.AddXWithoutDur(parallel_->x_without_dur());
  events_.Finish();
  return absl::OkStatus();
}

absl::Status TopLevelReader::ExpectEnd() {
  absl::StatusOr<int> c = Peek();
  if (!c.ok()) return c.status();
  if (*c >= 0) return ErrorAt(pos_, "end of input after the top-level value");
  return absl::OkStatus();
}

absl::Status TopLevelReader::ReadEventArray() {
  bool need_value = true;  // after '[' or ','
  while (true) {
    if (parallel_ != nullptr) {
      if (absl::Status s = DispatchRuns(&need_value); !s.ok()) return s;
    }
    absl::StatusOr<int> c = Peek();
    if (!c.ok()) return c.status();
    if (*c < 0) {
      // Tracers killed mid-write leave no closing ']'; every complete event
      // before this point is good.
      truncated_ = true;
      return Truncated(Offset(pos_),
                       "the event array has no closing ']' (truncated "
                       "trace); read the events before it");
    }
    if (*c == ']') {  // also after a trailing comma, which tracers leave
      ++pos_;
      return absl::OkStatus();
    }
    if (!need_value) {
      if (*c != ',') return ErrorAt(pos_, "',' or ']' after an event");
      ++pos_;
      need_value = true;
      continue;
    }
    absl::Status s;
    if (*c == '{' && Offset(pos_) >= no_batch_before_) {
      // The fast path: every event that is complete in the window at once.
      size_t avail = std::min(window_.size() - pos_, kMaxBatchBytes);
      // Until the input's first time is read, runs cannot go to the workers
      // and this thread parses alone: in small batches, so that dispatching
      // starts right after it (a whole window took ~90 ms on one core).
      if (parallel_ != nullptr && !parallel_->ready()) avail = std::min(avail, kBatchBeforeOrigin);
      size_t len = chrome_json::ScanCompleteElements(window_.data() + pos_, avail);
      if (len > 0) {
        if (s = ReadBatch(len, &need_value); !s.ok()) return s;
        continue;
      }
    }
    if (*c == '{') {
      s = ReadEvent();
    } else if (*c == ',') {
      return ErrorAt(pos_, "an event object");
    } else {
      s = ReadOtherElement();
    }
    if (!s.ok() || truncated_) return s;
    need_value = resynced_;
    resynced_ = false;
  }
}

absl::Status TopLevelReader::ReadBatch(size_t len, bool* need_value) {
  char* d = window_.mutable_data();
  const size_t begin = pos_, end = pos_ + len;
  // Bracket the run as an array in place: the byte before it is a
  // separator already consumed (or the window's front slack) and the byte
  // after it is not part of the run; both are restored below.
  const char before = d[static_cast<ptrdiff_t>(begin) - 1];
  const char after = d[end];
  d[static_cast<ptrdiff_t>(begin) - 1] = '[';
  d[end] = ']';
  const char* resume = nullptr;
  absl::Status s = events_.ParseBatch(d + begin - 1, len + 2, window_.alloc_end(),
                                      Offset(begin) - 1, &resume);
  d[static_cast<ptrdiff_t>(begin) - 1] = before;
  d[end] = after;
  if (!s.ok()) return s;
  if (resume == nullptr) {
    pos_ = end;
    *need_value = false;
    return absl::OkStatus();
  }
  no_batch_before_ = Offset(end);
  pos_ = static_cast<size_t>(resume - d);
  *need_value = pos_ == begin;
  return absl::OkStatus();
}

absl::Status TopLevelReader::DispatchRuns(bool* need_value) {
  absl::Status met;  // an error met while dispatching: it counts only if
                     // every run before it was good
  while (parallel_->ready()) {
    absl::StatusOr<int> c = Peek();
    if (!c.ok()) {
      met = c.status();
      break;
    }
    if (!*need_value && *c == ',') {
      ++pos_;
      *need_value = true;
      continue;
    }
    if (!*need_value || *c != '{' || Offset(pos_) < no_batch_before_) break;
    absl::StatusOr<size_t> len = FindRun();
    if (!len.ok()) {
      met = len.status();
      break;
    }
    if (*len == 0) break;
    if (absl::Status s = parallel_->Dispatch(window_.data() + pos_, *len, Offset(pos_), &errors_);
        !s.ok()) {
      return s;
    }
    pos_ += *len;
    *need_value = false;
  }
  if (parallel_->idle()) return met;
  absl::StatusOr<std::optional<ParallelRuns::Stop>> stop = parallel_->Sync();
  if (!stop.ok()) return stop.status();
  if (!stop->has_value()) return met;
  const ParallelRuns::Stop& at = **stop;
  if (absl::Status s = Rewind(at.resume); !s.ok()) return s;
  *need_value = at.need_value;
  no_batch_before_ = at.run_end;
  return absl::OkStatus();
}

absl::StatusOr<size_t> TopLevelReader::FindRun() {
  const size_t target = parallel_->run_bytes();
  while (true) {
    const size_t avail = window_.size() - pos_;
    size_t len = chrome_json::ScanCompleteElements(window_.data() + pos_, std::min(avail, target));
    // An element longer than a run is a run of its own.
    if (len == 0 && avail > target) {
      len = chrome_json::ScanCompleteElements(window_.data() + pos_, avail);
    }
    if (len > 0) return len;
    if (window_.eof() || avail > kMaxEventBytes) return 0;
    absl::StatusOr<bool> more = window_.Refill(pos_);
    if (!more.ok()) return more.status();
    pos_ = 0;
    if (!*more) return 0;
  }
}

absl::Status TopLevelReader::Rewind(uint64_t offset) {
  // The bytes are gone from the window (and a gzip stream cannot seek):
  // open the file again and skip to `offset`. Only damaged input gets here.
  // No progress from it: the bytes before `offset` were counted once.
  absl::StatusOr<std::unique_ptr<ByteSource>> reopened = ByteSource::Open(path_, nullptr);
  if (!reopened.ok()) return reopened.status();
  std::vector<char> skip(size_t{1} << 20);
  for (uint64_t left = offset; left > 0;) {
    absl::StatusOr<size_t> got = (*reopened)->Read(skip.data(), std::min<uint64_t>(left, skip.size()));
    if (!got.ok()) return got.status();
    if (*got == 0) return errors_.Error(offset - left, "the bytes read before", "end of file (the file changed while it was read)");
    left -= *got;
  }
  reopened_ = std::move(*reopened);
  source_ = reopened_.get();
  window_.Restart(source_, offset);
  pos_ = 0;
  return absl::OkStatus();
}

absl::Status TopLevelReader::ReadEvent() {
  ScanState st;
  size_t end = 0;
  absl::StatusOr<Extent> ext = FindExtent(kMaxEventBytes, st, &end);
  if (!ext.ok()) return ext.status();
  switch (*ext) {
    case Extent::kComplete: {
      absl::Status s = events_.Parse(window_.data() + pos_, end - pos_,
                                     window_.alloc_end(), Offset(pos_));
      if (!s.ok()) {
        std::string_view text(window_.data() + pos_, end - pos_);
        auto se = chrome_json::FindJsonSyntaxError(text, chrome_json::PrefixMode::kComplete);
        // Broken JSON makes the extent meaningless (a stray quote can pair
        // with one thousands of events later): resync from the damage.
        // Otherwise (a bad time, deep nesting) the extent is the event.
        if (se) return SkipElement(s, events_.error_reason(), std::nullopt, pos_ + se->offset);
        return SkipElement(s, events_.error_reason(), end, end);
      }
      pos_ = end;
      return s;
    }
    case Extent::kEof:
      return EndedInside("event", "truncated event", /*in_events=*/true);
    case Extent::kTooBig: {
      std::string_view text(window_.data() + pos_, window_.size() - pos_);
      if (auto se = chrome_json::FindJsonSyntaxError(text, chrome_json::PrefixMode::kPrefixOk)) {
        return SkipElement(errors_.Error(Offset(pos_) + se->offset, se->expected, se->got),
                           "event with broken JSON", std::nullopt, pos_ + se->offset);
      }
      return SkipElement(errors_.Error(Offset(pos_), "an event object under 64 MiB",
                                       "a larger one (an unclosed string or bracket?)"),
                         "event over 64 MiB (an unclosed string?)", std::nullopt, pos_ + 1);
    }
  }
  return absl::OkStatus();
}

absl::Status TopLevelReader::EndedInside(std::string_view what,
                                         std::string_view skip_reason,
                                         bool in_events) {
  std::string_view text(window_.data() + pos_, window_.size() - pos_);
  if (auto se = chrome_json::FindJsonSyntaxError(text, chrome_json::PrefixMode::kPrefixOk)) {
    absl::Status error = errors_.Error(Offset(pos_) + se->offset, se->expected, se->got);
    if (!in_events) return error;
    return SkipElement(error, "event with broken JSON", std::nullopt, pos_ + se->offset);
  }
  truncated_ = true;
  if (absl::Status s = Truncated(
          Offset(window_.size()),
          Cat("truncated at byte ", Offset(window_.size()), ": the last ", what,
              " (from byte ", Offset(pos_), ") is incomplete and was skipped"));
      !s.ok()) {
    return s;
  }
  sink_->CountSkipped(skip_reason);
  return absl::OkStatus();
}

absl::Status TopLevelReader::Truncated(uint64_t offset, std::string_view message) {
  if (strict_) {
    return errors_.Error(offset, "the rest of the trace (--strict)",
                         Cat("the end of the input: ", message));
  }
  sink_->Warn(errors_.At(offset, message));
  return absl::OkStatus();
}

absl::Status TopLevelReader::SkipElement(const absl::Status& error,
                                         std::string_view reason,
                                         std::optional<size_t> end,
                                         size_t damage_at) {
  if (strict_ || reason.empty()) return error;
  const uint64_t start = Offset(pos_);
  sink_->CountSkipped(reason);
  bool separated = false;
  if (end.has_value()) {
    pos_ = *end;
    absl::StatusOr<int> c = Peek();
    if (!c.ok()) return c.status();
    separated = *c < 0 || *c == ',' || *c == ']';
  } else {
    pos_ = damage_at;
  }
  bool found = true;
  if (!separated) {
    // The extent is not to be trusted (a stray quote turns strings inside
    // out): look for the next event after the damage.
    absl::StatusOr<bool> r = Resync();
    if (!r.ok()) return r.status();
    found = *r;
    resynced_ = found;
  }
  // Losing the rest of the input is always reported.
  if (skip_warnings_ < kMaxSkipWarnings || !found) {
    ++skip_warnings_;
    sink_->Warn(Cat(error.message(), "; skipped the event from byte ", start,
                    found ? Cat(", resumed at byte ", Offset(pos_))
                          : std::string(", found no later event: the rest of the "
                                        "input was skipped")));
  }
  if (!found) truncated_ = true;
  return absl::OkStatus();
}

absl::StatusOr<bool> TopLevelReader::Resync() {
  int state = 0;  // 0: looking for '}', 1: after '}', 2: after "},"
  while (true) {
    for (; pos_ < window_.size(); ++pos_) {
      const char c = window_.data()[pos_];
      if (state > 0 && chrome_json::IsJsonSpace(c)) continue;
      if (c == '}') {
        state = 1;
      } else if (state == 1 && c == ',') {
        state = 2;
      } else if (state == 1 && c == ']') {
        // The damaged event was the last one: resume at the array's end.
        absl::StatusOr<bool> ok = PlausibleArrayEnd();
        if (!ok.ok() || *ok) return ok;
        state = 0;
      } else if (state == 2 && c == '{') {
        absl::StatusOr<bool> ok = PlausibleElement();
        if (!ok.ok() || *ok) return ok;
        state = 0;
      } else {
        state = 0;
      }
    }
    absl::StatusOr<bool> more = window_.Refill(window_.size());
    if (!more.ok()) return more.status();
    pos_ = 0;
    if (!*more) return false;
  }
}

absl::StatusOr<bool> TopLevelReader::PlausibleElement() {
  ScanState st;
  size_t end = 0;
  absl::StatusOr<Extent> ext = FindExtent(kMaxCandidateBytes, st, &end);
  if (!ext.ok()) return ext.status();
  if (*ext == Extent::kEof) return true;  // a cut-off last event: read as such
  if (*ext == Extent::kTooBig) return false;
  std::string_view text(window_.data() + pos_, end - pos_);
  if (chrome_json::FindJsonSyntaxError(text, chrome_json::PrefixMode::kComplete)) return false;
  // An object nested in the damaged event's args ("[{...}, {...}]") is
  // valid JSON too; an event has a phase.
  if (text.find("\"ph\"") == std::string_view::npos) return false;
  size_t i = end;
  while (i < window_.size() && chrome_json::IsJsonSpace(window_.data()[i])) ++i;
  return i == window_.size() || window_.data()[i] == ',' || window_.data()[i] == ']';
}

absl::StatusOr<int> TopLevelReader::ByteAhead(size_t ahead) {
  while (window_.size() - pos_ <= ahead) {
    absl::StatusOr<bool> more = window_.Refill(pos_);
    if (!more.ok()) return more.status();
    pos_ = 0;
    if (!*more) return -1;
  }
  return static_cast<unsigned char>(window_.data()[pos_ + ahead]);
}

absl::StatusOr<bool> TopLevelReader::PlausibleArrayEnd() {
  // Whitespace runs longer than this are not what a tracer writes.
  constexpr size_t kMaxSpace = 4096;
  size_t i = 1;
  auto next = [&]() -> absl::StatusOr<int> {
    while (i < kMaxSpace) {
      absl::StatusOr<int> c = ByteAhead(i);
      if (!c.ok() || *c < 0 || !chrome_json::IsJsonSpace(static_cast<char>(*c))) return c;
      ++i;
    }
    return 'x';
  };
  absl::StatusOr<int> c = next();
  if (!c.ok() || *c < 0) return c.ok() ? absl::StatusOr<bool>(true) : c.status();
  if (*c == '}') {
    ++i;
    c = next();
    if (!c.ok()) return c.status();
    return *c < 0;
  }
  if (*c != ',') return false;
  ++i;
  c = next();
  if (!c.ok()) return c.status();
  return *c == '"';
}

absl::Status TopLevelReader::CheckValue(std::string_view text, uint64_t offset) {
  if (auto se = chrome_json::FindJsonSyntaxError(text, chrome_json::PrefixMode::kComplete)) {
    return errors_.Error(offset + se->offset, se->expected, se->got);
  }
  size_t bad = chrome_json::FindInvalidUtf8(text);
  if (bad < text.size()) {
    return errors_.Error(offset + bad, "valid UTF-8",
                         chrome_json::DescribeByte(text.data() + bad));
  }
  return absl::OkStatus();
}

absl::Status TopLevelReader::ReadOtherElement() {
  ScanState st;
  size_t end = 0;
  absl::StatusOr<Extent> ext = FindExtent(kMaxFieldBytes, st, &end);
  if (!ext.ok()) return ext.status();
  if (*ext == Extent::kEof) {
    return EndedInside("array element", "truncated event", /*in_events=*/true);
  }
  if (*ext == Extent::kTooBig) {
    sink_->CountSkipped("traceEvents element that is not an object");
    return DiscardRest(st);
  }
  std::string_view text(window_.data() + pos_, end - pos_);
  if (absl::Status s = CheckValue(text, Offset(pos_)); !s.ok()) {
    auto se = chrome_json::FindJsonSyntaxError(text, chrome_json::PrefixMode::kComplete);
    return SkipElement(s, "traceEvents element with broken JSON", end,
                       pos_ + (se ? se->offset : 0));
  }
  sink_->CountSkipped("traceEvents element that is not an object");
  pos_ = end;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> TopLevelReader::ReadKey() {
  const size_t key_pos = pos_;
  ScanState st;
  size_t end = 0;
  absl::StatusOr<Extent> ext = FindExtent(kMaxKeyBytes, st, &end);
  if (!ext.ok()) return ext.status();
  if (*ext == Extent::kTooBig) {
    return errors_.Error(Offset(key_pos), "a key under 1 MiB", "a longer string");
  }
  if (*ext == Extent::kEof) return std::nullopt;
  std::string_view raw(window_.data() + pos_, end - pos_);
  if (absl::Status s = CheckValue(raw, Offset(pos_)); !s.ok()) return s;
  pos_ = end;
  if (raw.find('\\') == std::string_view::npos) {
    return std::string(raw.substr(1, raw.size() - 2));
  }
  std::string_view key;
  auto e = key_parser_
               .iterate(raw.data(), raw.size(),
                        static_cast<size_t>(window_.alloc_end() - raw.data()))
               .get_string()
               .get(key);
  if (e) return errors_.Error(Offset(pos_), "a valid string key", simdjson::error_message(e));
  return std::string(key);
}

absl::Status TopLevelReader::ReadTopField(const std::string& key) {
  ScanState st;
  size_t end = 0;
  const uint64_t start = Offset(pos_);
  absl::StatusOr<Extent> ext = FindExtent(kMaxFieldBytes, st, &end);
  if (!ext.ok()) return ext.status();
  if (*ext == Extent::kEof) {
    return EndedInside(Cat("top-level field \"", key, "\""),
                       "truncated top-level field");
  }
  if (*ext == Extent::kTooBig) {
    sink_->Warn(errors_.At(start, Cat("top-level field \"", key,
                                               "\" is over 16 MiB; not kept")));
    sink_->CountSkipped("top-level field over 16 MiB");
    return DiscardRest(st);
  }
  std::string_view text(window_.data() + pos_, end - pos_);
  if (absl::Status s = CheckValue(text, start); !s.ok()) return s;
  sink_->SetInputField(key, text);
  if (key == "systemTraceEvents") {
    // Usually ftrace text (or a Fuchsia object): kept verbatim, but this
    // reader does not turn it into events.
    sink_->Warn(errors_.At(start, "\"systemTraceEvents\" is kept as a raw "
                                  "field, not parsed into events"));
    sink_->CountSkipped("systemTraceEvents (not parsed into events)");
  }
  pos_ = end;
  return absl::OkStatus();
}

absl::Status TopLevelReader::ReadObjectForm() {
  bool need_key = true;  // after '{' or ','
  bool saw_events = false, saw_system = false;
  // The input ended before the closing '}': a cut-off trace is fine once its
  // events were seen, otherwise there is nothing to read.
  auto ended = [&]() -> absl::Status {
    if (!saw_events && !saw_system) {
      return ErrorAt(window_.size(), "a \"traceEvents\" array in the top-level object");
    }
    truncated_ = true;
    return Truncated(Offset(window_.size()),
                     "the top-level object is not closed (truncated trace)");
  };
  while (true) {
    absl::StatusOr<int> c = Peek();
    if (!c.ok()) return c.status();
    if (*c < 0) return ended();
    if (*c == '}') {  // also after a trailing comma
      ++pos_;
      break;
    }
    if (!need_key) {
      if (*c != ',') return ErrorAt(pos_, "',' or '}' in the top-level object");
      ++pos_;
      need_key = true;
      continue;
    }
    if (*c != '"') return ErrorAt(pos_, "a string key in the top-level object");
    absl::StatusOr<std::optional<std::string>> key = ReadKey();
    if (!key.ok()) return key.status();
    if (!key->has_value()) return ended();
    c = Peek();
    if (!c.ok()) return c.status();
    if (*c < 0) return ended();
    if (*c != ':') return ErrorAt(pos_, "':' after a key");
    ++pos_;
    c = Peek();
    if (!c.ok()) return c.status();
    if (*c < 0) return ended();
    absl::Status s;
    if (**key == "traceEvents") {
      if (*c != '[') return ErrorAt(pos_, "'[' starting the traceEvents array");
      ++pos_;
      saw_events = true;
      s = ReadEventArray();
    } else {
      saw_system = saw_system || **key == "systemTraceEvents";
      s = ReadTopField(**key);
    }
    if (!s.ok() || truncated_) return s;
    need_key = false;
  }
  if (!saw_events && !saw_system) {
    return errors_.Error(Offset(pos_ - 1), "a \"traceEvents\" array in the top-level object",
                         "an object without one");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadChromeJson(const std::string& path, std::string_view host,
                            EventSink* sink, const ReadOptions& opts) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source =
      ByteSource::Open(path, opts.progress);
  if (!source.ok()) return source.status();
  sink->BeginInput(path, host);
  // The reader holds a 4 MiB window and simdjson parsers: keep it off the
  // stack.
  auto reader = std::make_unique<TopLevelReader>(path, source->get(), sink, opts);
  return reader->Run();
}

}  // namespace tracetable
