// EventParser, second half: the phase mapping (what each event becomes in
// the sink) and exact time conversion. Parsing and validation are in
// event_parser.cc.
#include <cmath>
#include <optional>
#include <tuple>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "format/time.h"
#include "ingest/chrome_json/event_parser.h"
#include "ingest/chrome_json/json_scan.h"
#include "ingest/chrome_json/str.h"

namespace tracetable::chrome_json {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

// A counter value written as a string (".75", "050", "-1e3"): the decimal
// text quoted times accept (format/time.h), as a finite double.
std::optional<double> NumberText(std::string_view t) {
  size_t i = 0, digits = 0;
  auto skip_digits = [&] {
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) ++digits;
  };
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
  skip_digits();
  if (i < t.size() && t[i] == '.') {
    ++i;
    skip_digits();
  }
  if (digits == 0) return std::nullopt;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
    const size_t before = digits;
    skip_digits();
    if (digits == before) return std::nullopt;
  }
  if (i != t.size()) return std::nullopt;
  double v = 0;
  if (!absl::SimpleAtod(absl::string_view(t.data(), t.size()), &v) || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Thread time is stored for X, B/E and instants (what Chrome and Perfetto
// show it on); elsewhere the event is kept and the loss counted, so that
// ingest and info say so instead of dropping it silently.
constexpr char kThreadTimeNotStored[] = "thread time (tts/tdur) on flow, async or counter events not stored; events kept";

bool IsEmptyObject(std::string_view obj) {
  for (char c : obj.substr(1, obj.size() - 2)) {
    if (!IsJsonSpace(c)) return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------- times

absl::StatusOr<int64_t> EventParser::RelativeTime(const TimeField& f,
                                                  std::string_view key) {
  absl::StatusOr<NsPs> t = f.parsed ? f.value : ParseMicrosText(f.text);
  if (!t.ok()) {
    return TimeError(f.at,
                   Cat("a number of microseconds for \"", key,
                                "\" within int64 nanoseconds"),
                   Quote(f.text));
  }
  absl::StatusOr<int64_t> rel = sink_->ToRelativePs(t->ns, t->ps);
  if (!rel.ok()) {
    return TimeError(f.at,
                   Cat("a \"", key,
                                "\" within the table's time range (about "
                                "+-100 days of its first timestamp)"),
                   Cat(Quote(f.text), " (", rel.status().message(), ")"));
  }
  return *rel;
}

absl::StatusOr<int64_t> EventParser::DurationPs(const TimeField& f,
                                                std::string_view key) {
  absl::StatusOr<NsPs> t = f.parsed ? f.value : ParseMicrosText(f.text);
  __int128 ps = 0;
  if (t.ok()) ps = static_cast<__int128>(t->ns) * 1000 + t->ps;
  if (!t.ok() || ps > INT64_MAX || ps < INT64_MIN) {
    return TimeError(f.at,
                   Cat("a number of microseconds for \"", key,
                                "\" within int64 picoseconds"),
                   Quote(f.text));
  }
  return static_cast<int64_t>(ps);
}

absl::Status EventParser::ThreadTimes(const RawEvent& ev, Event* e) {
  for (const auto& [f, key, bit] : {std::tuple{&ev.tts, "tts", kHasTts}, std::tuple{&ev.tdur, "tdur", kHasTdur}}) {
    if (!f->present) continue;
    absl::StatusOr<NsPs> t = f->parsed ? f->value : ParseMicrosText(f->text);
    if (!t.ok()) {
      return TimeError(f->at, Cat("a number of microseconds for \"", key, "\""), Quote(f->text));
    }
    const __int128 ps = static_cast<__int128>(t->ns) * 1000 + t->ps;
    if (ps > INT64_MAX || ps < INT64_MIN) {
      sink_->CountSkipped("tts/tdur beyond int64 picoseconds (thread time not stored; events kept)");
      continue;
    }
    (bit == kHasTts ? e->tts : e->tdur) = static_cast<int64_t>(ps);
    e->thread_time |= bit;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------- emitting

absl::Status EventParser::Add(const Event& e) {
  ++events_added_;
  return sink_->Add(e);
}

uint32_t EventParser::ThreadTrackFor(const RawEvent& ev) {
  return threads_.Track(ev.pid, ev.tid);
}

bool EventParser::IdKey(const RawEvent& ev, std::string* out) const {
  out->clear();
  if (ev.has_id) {
    out->append(ev.id);
  } else if (ev.has_id2_global) {
    out->append(ev.id2_global);
  } else if (ev.has_id2_local) {
    // A process-local id only matches within its process.
    CatTo(out, "pid ", ev.pid.text, ":", ev.id2_local);
  } else {
    return false;
  }
  return true;
}

std::string_view EventParser::ArgsJson(const RawEvent& ev) const {
  // "{}" carries nothing; storing it for every event would only cost space.
  if (ev.args.size() < 2 || IsEmptyObject(ev.args)) return std::string_view();
  return ev.args;
}

absl::Status EventParser::Emit(const RawEvent& ev) {
  if (ev.ph.empty()) {
    sink_->CountSkipped("event without ph");
    return absl::OkStatus();
  }
  const char ph = ev.ph.size() == 1 ? ev.ph[0] : '\0';
  if (ph == 'M') return EmitMetadata(ev);
  if (!ev.ts.present && ph != '\0') {
    sink_->CountSkipped(Cat("phase '", ev.ph, "' without ts"));
    return absl::OkStatus();
  }
  switch (ph) {
    case 'X': return EmitSlice(ev);
    case 'B': return EmitOnThread(ev, EventKind::kBegin, 0);
    case 'E': return EmitOnThread(ev, EventKind::kEnd, 0);
    case 'i':
    case 'I':
    case 'R': {
      uint32_t flags = 0;
      if (ev.s == "g") flags = kFlagScopeGlobal;
      if (ev.s == "p") flags = kFlagScopeProcess;
      return EmitOnThread(ev, EventKind::kInstant, flags);
    }
    case 'C': return EmitCounters(ev);
    case 's': return EmitFlow(ev, EventKind::kFlowStart);
    case 't': return EmitFlow(ev, EventKind::kFlowStep);
    case 'f': return EmitFlow(ev, EventKind::kFlowEnd);
    case 'b': return EmitAsync(ev, EventKind::kAsyncBegin, false);
    case 'n': return EmitAsync(ev, EventKind::kAsyncInstant, false);
    case 'e': return EmitAsync(ev, EventKind::kAsyncEnd, false);
    case 'S': return EmitAsync(ev, EventKind::kAsyncBegin, true);
    case 'T':
    case 'p': return EmitAsync(ev, EventKind::kAsyncInstant, true);
    case 'F': return EmitAsync(ev, EventKind::kAsyncEnd, true);
    default:
      sink_->CountSkipped(Cat("phase '", ev.ph, "'"));
      return absl::OkStatus();
  }
}

absl::StatusOr<Event> EventParser::ThreadEvent(const RawEvent& ev, EventKind kind,
                                               uint32_t flags) {
  absl::StatusOr<int64_t> ts = RelativeTime(ev.ts, "ts");
  if (!ts.ok()) return ts.status();
  Event e;
  e.kind = kind;
  // Scoped instants belong to no thread: Perfetto and catapult draw them on
  // a track of their process ("p") or of the whole trace ("g").
  if (flags & kFlagScopeGlobal) {
    e.track = sink_->InstantTrack(ev.pid, true);
  } else if (flags & kFlagScopeProcess) {
    e.track = sink_->InstantTrack(ev.pid, false);
  } else {
    e.track = ThreadTrackFor(ev);
  }
  e.ts = *ts;
  e.name = strings_.Intern(ev.name);
  e.cat = strings_.Intern(ev.cat);
  e.flags = flags;
  e.args_json = ArgsJson(ev);
  return e;
}

absl::Status EventParser::EmitOnThread(const RawEvent& ev, EventKind kind,
                                       uint32_t flags) {
  absl::StatusOr<Event> made = ThreadEvent(ev, kind, flags);
  if (!made.ok()) return made.status();
  Event& e = *made;
  if (kind == EventKind::kBegin && (ev.flow_in || ev.flow_out)) {
    // Flow v2 binding points may sit on B as well as on X events.
    std::string_view id = ev.has_bind_id ? ev.bind_id : ev.id;
    uint32_t fid = sink_->InternId(id);
    if (ev.flow_in) e.flow_in = fid;
    if (ev.flow_out) e.flow_out = fid;
  }
  if (absl::Status s = ThreadTimes(ev, &e); !s.ok()) return s;
  return Add(e);
}

absl::Status EventParser::EmitSlice(const RawEvent& ev) {
  absl::StatusOr<int64_t> ts = RelativeTime(ev.ts, "ts");
  if (!ts.ok()) return ts.status();
  int64_t dur = 0;
  if (ev.dur.present) {
    absl::StatusOr<int64_t> d = DurationPs(ev.dur, "dur");
    if (!d.ok()) return d.status();
    dur = *d;
  } else {
    ++x_without_dur_;
  }
  Event e;
  if (absl::Status s = ThreadTimes(ev, &e); !s.ok()) return s;
  e.kind = EventKind::kSlice;
  e.track = ThreadTrackFor(ev);
  e.ts = *ts;
  e.dur = dur;
  e.name = strings_.Intern(ev.name);
  e.cat = strings_.Intern(ev.cat);
  e.args_json = ArgsJson(ev);
  if (ev.flow_in || ev.flow_out) {
    std::string_view id = ev.has_bind_id ? ev.bind_id : ev.id;
    uint32_t fid = sink_->InternId(id);
    if (ev.flow_in) e.flow_in = fid;
    if (ev.flow_out) e.flow_out = fid;
  }
  return Add(e);
}

absl::StatusOr<od::object> EventParser::ParseArgs(const RawEvent& ev) {
  // Re-reads the args text (already validated) with a second parser so the
  // strings of the event, held by the first, stay valid.
  od::object obj;
  auto e = args_parser_
               .iterate(ev.args.data(), ev.args.size(),
                        static_cast<size_t>(alloc_end_ - ev.args.data()))
               .get(args_doc_);
  if (!e) e = args_doc_.get_object().get(obj);
  if (e) return SimdError(e, ev.args.data());
  return obj;
}

absl::Status EventParser::EmitCounters(const RawEvent& ev) {
  if (ev.args.empty()) {
    sink_->CountSkipped("counter event without args");
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> ts = RelativeTime(ev.ts, "ts");
  if (!ts.ok()) return ts.status();
  absl::StatusOr<od::object> obj = ParseArgs(ev);
  if (!obj.ok()) return obj.status();
  key_buf_.assign(ev.name);
  if (ev.has_id) CatTo(&key_buf_, " [", ev.id, "]");
  Event e;
  e.kind = EventKind::kCounter;
  e.ts = *ts;
  e.cat = strings_.Intern(ev.cat);
  int values = 0;
  for (auto fr : *obj) {
    od::field f;
    std::string_view series;
    od::json_type t;
    error_code err;
    if ((err = std::move(fr).get(f)) || (err = f.unescaped_key().get(series)) ||
        (err = f.value().type().get(t))) {
      return SimdError(err, ev.args.data());
    }
    if (t == od::json_type::string) {
      // Some tracers quote counter values as they quote ts.
      std::string_view text;
      if ((err = f.value().get_string().get(text))) return SimdError(err, ev.args.data());
      std::optional<double> v = NumberText(text);
      if (!v) {
        sink_->CountSkipped("counter arg that is not a number");
        continue;
      }
      e.value = *v;
    } else if (t == od::json_type::number) {
      const char* at = f.value().raw_json_token().data();
      if ((err = f.value().get_double().get(e.value))) return SimdError(err, at);
    } else {
      sink_->CountSkipped("counter arg that is not a number");
      continue;
    }
    e.track = sink_->CounterTrack(ev.pid, key_buf_, series);
    e.name = strings_.Intern(series);  // event.h: for counters, the series
    ++values;
    if (absl::Status s = Add(e); !s.ok()) return s;
  }
  if (values == 0) sink_->CountSkipped("counter event without numeric args");
  if (values > 0 && (ev.tts.present || ev.tdur.present)) sink_->CountSkipped(kThreadTimeNotStored);
  return absl::OkStatus();
}

absl::StatusOr<EventParser::MetadataArgs> EventParser::ReadMetadataArgs(
    const RawEvent& ev) {
  MetadataArgs out;
  if (ev.args.empty()) return out;
  absl::StatusOr<od::object> obj = ParseArgs(ev);
  if (!obj.ok()) return obj.status();
  for (auto fr : *obj) {
    od::field f;
    std::string_view key, text;
    od::json_type t;
    error_code err;
    if ((err = std::move(fr).get(f)) || (err = f.unescaped_key().get(key)) ||
        (err = f.value().type().get(t))) {
      return SimdError(err, ev.args.data());
    }
    if (key == "name" && t == od::json_type::string) {
      if (!f.value().get_string().get(text)) out.name = text;
    } else if (key == "labels" && t == od::json_type::string) {
      if (!f.value().get_string().get(text)) out.labels = text;
    } else if (key == "sort_index" && t == od::json_type::number) {
      double d = 0;  // integers in practice; a fraction is truncated
      if (!f.value().get_double().get(d) && d >= -9.2e18 && d <= 9.2e18) {
        out.sort_index = static_cast<int64_t>(d);
      }
    }
  }
  return out;
}

absl::Status EventParser::EmitMetadata(const RawEvent& ev) {
  const std::string_view name = ev.name;
  const bool known = name == "process_name" || name == "thread_name" ||
                     name == "process_sort_index" ||
                     name == "thread_sort_index" || name == "process_labels";
  if (!known) {
    sink_->CountSkipped(Cat("metadata '", name, "'"));
    return absl::OkStatus();
  }
  absl::StatusOr<MetadataArgs> args = ReadMetadataArgs(ev);
  if (!args.ok()) return args.status();
  const bool complete = name.ends_with("_name")    ? args->name.has_value()
                        : name.ends_with("_index") ? args->sort_index.has_value()
                                                   : args->labels.has_value();
  if (!complete) {
    sink_->CountSkipped(Cat("metadata '", name, "' without its arg"));
    return absl::OkStatus();
  }
  if (name == "process_name") sink_->SetProcessName(ev.pid, *args->name);
  if (name == "thread_name") sink_->SetThreadName(ev.pid, ev.tid, *args->name);
  if (name == "process_sort_index") sink_->SetProcessSortIndex(ev.pid, *args->sort_index);
  if (name == "thread_sort_index") {
    sink_->SetThreadSortIndex(ev.pid, ev.tid, *args->sort_index);
  }
  if (name == "process_labels") {
    // Chrome writes the labels as one comma-separated string.
    for (absl::string_view label :
         absl::StrSplit(AbslView(*args->labels), ',', absl::SkipEmpty())) {
      sink_->AddProcessLabel(ev.pid, std::string_view(label.data(), label.size()));
    }
  }
  return absl::OkStatus();
}

absl::Status EventParser::EmitFlow(const RawEvent& ev, EventKind kind) {
  if (!IdKey(ev, &key_buf_)) {
    sink_->CountSkipped(Cat("flow phase '", ev.ph, "' without id"));
    return absl::OkStatus();
  }
  const uint32_t flags = ev.bp == "e" ? uint32_t{kFlagBindEnclosing} : 0u;
  absl::StatusOr<Event> e = ThreadEvent(ev, kind, flags);
  if (!e.ok()) return e.status();
  e->flow_id = sink_->InternId(key_buf_);
  absl::Status s = Add(*e);
  if (s.ok() && (ev.tts.present || ev.tdur.present)) sink_->CountSkipped(kThreadTimeNotStored);
  return s;
}

absl::Status EventParser::EmitAsync(const RawEvent& ev, EventKind kind,
                                    bool legacy) {
  std::string id;
  if (!IdKey(ev, &id)) {
    sink_->CountSkipped(Cat("async phase '", ev.ph, "' without id"));
    return absl::OkStatus();
  }
  // Async events match on category + id (+ scope); legacy S/T/F live in
  // their own key space so they never pair with nestable b/e.
  key_buf_.clear();
  CatTo(&key_buf_, legacy ? "legacy|" : "", ev.cat, "|", ev.scope,
                  "|", id);
  absl::StatusOr<int64_t> ts = RelativeTime(ev.ts, "ts");
  if (!ts.ok()) return ts.status();
  Event e;
  e.kind = kind;
  e.track = sink_->AsyncTrack(ev.pid, ev.name);
  e.ts = *ts;
  e.name = strings_.Intern(ev.name);
  e.cat = strings_.Intern(ev.cat);
  e.flow_id = sink_->InternId(key_buf_);
  e.args_json = ArgsJson(ev);
  absl::Status s = Add(e);
  if (s.ok() && (ev.tts.present || ev.tdur.present)) sink_->CountSkipped(kThreadTimeNotStored);
  return s;
}

void EventParser::Finish() {
  if (x_without_dur_ > 0) {
    sink_->Warn(Cat(errors_->path, ": ", x_without_dur_,
                             " 'X' events without \"dur\" read as zero-length"));
  }
}

}  // namespace tracetable::chrome_json
