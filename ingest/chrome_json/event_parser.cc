#include "ingest/chrome_json/event_parser.h"

#include <cctype>
#include <cstring>
#include <optional>
#include <utility>

#include "ingest/chrome_json/str.h"
#include "absl/strings/str_split.h"
#include "format/time.h"
#include "ingest/chrome_json/json_scan.h"

namespace tracetable::chrome_json {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

// The fields the phase mapping reads; everything else is only validated.
enum class Key : uint8_t {
  kOther, kPh, kName, kCat, kTs, kDur, kTdur, kTts, kPid, kTid, kId, kId2,
  kBindId, kFlowIn, kFlowOut, kS, kBp, kScope, kArgs,
};

// Classifies a key from its raw bytes (k points after the opening quote)
// without measuring it first: the byte after a known name must be the
// closing quote. Returns kOther for unknown or escaped keys.
Key ClassifyRaw(const char* k) {
  auto is = [k](const char* name, size_t n) {
    return std::memcmp(k, name, n) == 0 && k[n] == '"';
  };
  switch (k[0]) {
    case 'p':
      if (is("ph", 2)) return Key::kPh;
      if (is("pid", 3)) return Key::kPid;
      break;
    case 't':
      if (is("ts", 2)) return Key::kTs;
      if (is("tid", 3)) return Key::kTid;
      if (is("tts", 3)) return Key::kTts;
      if (is("tdur", 4)) return Key::kTdur;
      break;
    case 'n':
      if (is("name", 4)) return Key::kName;
      break;
    case 'c':
      if (is("cat", 3)) return Key::kCat;
      break;
    case 'd':
      if (is("dur", 3)) return Key::kDur;
      break;
    case 'a':
      if (is("args", 4)) return Key::kArgs;
      break;
    case 'i':
      if (is("id", 2)) return Key::kId;
      if (is("id2", 3)) return Key::kId2;
      break;
    case 's':
      if (is("s", 1)) return Key::kS;
      if (is("scope", 5)) return Key::kScope;
      break;
    case 'b':
      if (is("bp", 2)) return Key::kBp;
      if (is("bind_id", 7)) return Key::kBindId;
      break;
    case 'f':
      if (is("flow_in", 7)) return Key::kFlowIn;
      if (is("flow_out", 8)) return Key::kFlowOut;
      break;
  }
  return Key::kOther;
}

Key Classify(std::string_view k) {
  switch (k.size()) {
    case 1:
      if (k == "s") return Key::kS;
      break;
    case 2:
      if (k == "ph") return Key::kPh;
      if (k == "ts") return Key::kTs;
      if (k == "id") return Key::kId;
      if (k == "bp") return Key::kBp;
      break;
    case 3:
      if (k == "pid") return Key::kPid;
      if (k == "tid") return Key::kTid;
      if (k == "cat") return Key::kCat;
      if (k == "dur") return Key::kDur;
      if (k == "tts") return Key::kTts;
      if (k == "id2") return Key::kId2;
      break;
    case 4:
      if (k == "name") return Key::kName;
      if (k == "args") return Key::kArgs;
      if (k == "tdur") return Key::kTdur;
      break;
    case 5:
      if (k == "scope") return Key::kScope;
      break;
    case 7:
      if (k == "bind_id") return Key::kBindId;
      if (k == "flow_in") return Key::kFlowIn;
      break;
    case 8:
      if (k == "flow_out") return Key::kFlowOut;
      break;
  }
  return Key::kOther;
}

// raw_json_token() includes the whitespace after the token.
std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsJsonSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Strict JSON number syntax. The raw token of a number is not validated by
// simdjson unless it is converted, and ParseMicros is more lenient ("+1",
// ".5"), so times check their text here.
bool IsJsonNumber(std::string_view t) {
  size_t i = 0, n = t.size();
  if (i < n && t[i] == '-') ++i;
  if (i >= n) return false;
  if (t[i] == '0') {
    ++i;
  } else if (IsDigit(t[i])) {
    while (i < n && IsDigit(t[i])) ++i;
  } else {
    return false;
  }
  if (i < n && t[i] == '.') {
    ++i;
    if (i >= n || !IsDigit(t[i])) return false;
    while (i < n && IsDigit(t[i])) ++i;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    if (i >= n || !IsDigit(t[i])) return false;
    while (i < n && IsDigit(t[i])) ++i;
  }
  return i == n;
}

}  // namespace

std::optional<NsPs> FastMicros(std::string_view t) {
  static constexpr uint64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  const char* p = t.data();
  const char* const end = p + t.size();
  const char* q = p;
  uint64_t whole = 0;  // may wrap past 20 digits; rejected below anyway
  for (; q < end; ++q) {
    const unsigned d = static_cast<unsigned char>(*q) - unsigned{'0'};
    if (d > 9) break;
    whole = whole * 10 + d;
  }
  const size_t whole_digits = static_cast<size_t>(q - p);
  // At most 15 digits keeps whole * 1000 + 999 inside int64.
  if (whole_digits == 0 || whole_digits > 15) return std::nullopt;
  uint64_t frac = 0;  // picoseconds: the first 6 fraction digits
  if (q < end) {
    if (*q != '.') return std::nullopt;  // an exponent: the general parser
    const char* const frac_start = ++q;
    const char* const frac_end = end - frac_start > 6 ? frac_start + 6 : end;
    for (; q < frac_end; ++q) {
      const unsigned d = static_cast<unsigned char>(*q) - unsigned{'0'};
      if (d > 9) return std::nullopt;
      frac = frac * 10 + d;
    }
    const size_t frac_digits = static_cast<size_t>(q - frac_start);
    if (frac_digits == 0) return std::nullopt;
    for (; q < end; ++q) {  // digits below a picosecond are truncated
      if (static_cast<unsigned>(static_cast<unsigned char>(*q) - '0') > 9) return std::nullopt;
    }
    frac *= kPow10[6 - frac_digits];
  }
  return NsPs{static_cast<int64_t>(whole * 1000 + frac / 1000),
              static_cast<int32_t>(frac % 1000)};
}

absl::StatusOr<NsPs> ParseMicrosText(std::string_view t) {
  if (std::optional<NsPs> fast = FastMicros(t)) return *fast;
  return ParseMicros(t);
}

namespace {

// "-12", "7" (JSON integers, no leading zeros): what IdToken calls a number.
bool IsJsonInteger(std::string_view t) {
  size_t i = (!t.empty() && t[0] == '-') ? 1 : 0;
  if (i >= t.size()) return false;
  if (t[i] == '0') return i + 1 == t.size();
  for (; i < t.size(); ++i) {
    if (!IsDigit(t[i])) return false;
  }
  return true;
}

// The first '"' or '\\' at or after p, 8 bytes at a time. Callers stay
// inside a validated string, so one of them comes before the end of the
// text, and the window's padding keeps the 8-byte reads in bounds.
inline const char* FindQuoteOrBackslash(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  while (true) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    const uint64_t q = w ^ (kOnes * '"');
    const uint64_t b = w ^ (kOnes * '\\');
    // Zero bytes of q or b are matches; the lowest flagged byte is exact.
    const uint64_t m = (((q - kOnes) & ~q) | ((b - kOnes) & ~b)) & kHigh;
    if (m != 0) return p + (__builtin_ctzll(m) >> 3);
    p += 8;
  }
}

// The key of a field without copying it when it has no escapes (keys
// almost never do).
error_code FieldKey(od::field& f, std::string_view* out) {
  const char* raw = f.key().raw();
  const char* q = FindQuoteOrBackslash(raw);
  if (*q == '"') {
    *out = std::string_view(raw, static_cast<size_t>(q - raw));
    return simdjson::SUCCESS;
  }
  return f.unescaped_key().get(*out);
}

// A string value without copying it when it has no escapes (most names
// and categories); stage 1 already checked its UTF-8 and control bytes.
error_code StringValue(od::value& v, std::string_view* out) {
  const char* raw = v.raw_json_token().data() + 1;  // after the quote
  const char* q = FindQuoteOrBackslash(raw);
  if (*q == '\\') return v.get_string().get(*out);
  od::raw_json_string unused;
  if (auto e = v.get_raw_json_string().get(unused)) return e;
  *out = std::string_view(raw, static_cast<size_t>(q - raw));
  return simdjson::SUCCESS;
}

bool IsEmptyObject(std::string_view obj) {
  for (char c : obj.substr(1, obj.size() - 2)) {
    if (!IsJsonSpace(c)) return false;
  }
  return true;
}

}  // namespace

EventParser::EventParser(EventSink* sink, const InputErrorContext* errors)
    : sink_(sink), errors_(errors), strings_(sink), threads_(sink) {}

// ---------------------------------------------------------------- errors

uint64_t EventParser::OffsetOf(const char* at) const {
  if (at == nullptr || at < text_ || at > text_ + text_len_) return offset_;
  return offset_ + static_cast<uint64_t>(at - text_);
}

absl::Status EventParser::ErrorAt(const char* at, std::string_view expected,
                                  std::string_view got) const {
  return errors_->Error(OffsetOf(at), expected, got);
}

absl::Status EventParser::SimdError(error_code err, const char* at) const {
  if (batch_mode_) {
    batch_json_error_ = true;
    return absl::InvalidArgumentError("JSON error in a batch (reread)");
  }
  // simdjson says what is wrong but not exactly where; the grammar checker
  // finds the first syntax error, and the UTF-8 scan the first bad byte.
  std::string_view text(text_, text_len_);
  if (auto se = FindJsonSyntaxError(text, PrefixMode::kComplete)) {
    return errors_->Error(offset_ + se->offset, se->expected, se->got);
  }
  if (err == simdjson::UTF8_ERROR) {
    size_t k = FindInvalidUtf8(text);
    return errors_->Error(offset_ + k, "valid UTF-8",
                          k < text.size() ? DescribeByte(text_ + k) : "end of file");
  }
  std::string_view token;
  if (at != nullptr && at >= text_ && at < text_ + text_len_) {
    const char* e = at;
    while (e < text_ + text_len_ && *e != ',' && *e != '}' && *e != ']' &&
           !IsJsonSpace(*e)) {
      ++e;
    }
    token = std::string_view(at, static_cast<size_t>(e - at));
  }
  if (err == simdjson::NUMBER_ERROR ||
      err == simdjson::NUMBER_OUT_OF_RANGE) {
    return ErrorAt(at, "a number within the range of a double", Quote(token));
  }
  return ErrorAt(at, "a valid JSON event object",
                 Cat(Quote(token), " (simdjson: ",
                              simdjson::error_message(err), ")"));
}

// ---------------------------------------------------------------- parsing

namespace {
EventParser::TimeField PresentTime(std::string_view text, const char* at) {
  EventParser::TimeField f;
  f.text = text;
  f.at = at;
  f.present = true;
  return f;
}
}  // namespace

absl::Status EventParser::Parse(const char* p, size_t n, const char* alloc_end,
                                uint64_t offset) {
  text_ = p;
  text_len_ = n;
  alloc_end_ = alloc_end;
  offset_ = offset;
  od::document doc;
  if (auto e = parser_.iterate(p, n, static_cast<size_t>(alloc_end - p)).get(doc)) {
    return SimdError(e, p);
  }
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return SimdError(e, p);
  return ParseObject(obj, p, doc);
}

absl::Status EventParser::ParseObject(od::object& obj, const char* at,
                                      od::document& doc) {
  RawEvent ev;
  ev.at = at;
  for (auto fr : obj) {
    od::field f;
    if (auto e = std::move(fr).get(f)) {
      const char* loc = nullptr;
      if (doc.current_location().get(loc)) loc = nullptr;
      return SimdError(e, loc);
    }
    if (absl::Status s = ReadField(f, ev); !s.ok()) return s;
  }
  return Emit(ev);
}

absl::Status EventParser::ParseBatch(const char* p, size_t n,
                                     const char* alloc_end, uint64_t offset,
                                     const char** resume) {
  text_ = p;
  text_len_ = n;
  alloc_end_ = alloc_end;
  offset_ = offset;
  *resume = nullptr;
  batch_mode_ = true;
  batch_json_error_ = false;
  const char* last_start = nullptr;  // the last element fully handled
  // Where a reread starts: right after the last element handled.
  auto stop = [&]() {
    batch_mode_ = false;
    if (last_start == nullptr) {
      *resume = p + 1;
    } else {
      ScanState st;
      *resume = last_start + ScanValue(st, last_start, static_cast<size_t>(p + n - last_start));
    }
    return absl::OkStatus();
  };
  od::document doc;
  od::array arr;
  if (parser_.iterate(p, n, static_cast<size_t>(alloc_end - p)).get(doc) ||
      doc.get_array().get(arr)) {
    return stop();
  }
  for (auto er : arr) {
    od::value v;
    od::json_type t;
    if (std::move(er).get(v) || v.type().get(t)) return stop();
    const char* at = v.raw_json_token().data();
    absl::Status s;
    if (t == od::json_type::object) {
      od::object obj;
      if (v.get_object().get(obj)) return stop();
      s = ParseObject(obj, at, doc);
    } else {
      s = Skim(v, 0);
      if (s.ok()) sink_->CountSkipped("traceEvents element that is not an object");
    }
    if (batch_json_error_) return stop();
    if (!s.ok()) {
      batch_mode_ = false;
      return s;
    }
    last_start = at;
  }
  batch_mode_ = false;
  return absl::OkStatus();
}

absl::Status EventParser::ReadField(od::field& f, RawEvent& ev) {
  // Read before FieldKey: unescaping consumes the key.
  const char* raw_key = f.key().raw();
  Key kind = ClassifyRaw(raw_key);
  if (kind == Key::kOther) {
    // Unknown, or a known key spelled with escapes ("p\u0068").
    std::string_view key;
    if (auto e = FieldKey(f, &key)) return SimdError(e, raw_key);
    kind = Classify(key);
  }
  od::value& v = f.value();
  switch (kind) {
    case Key::kPh: return ReadText(v, &ev.ph);
    case Key::kName: return ReadText(v, &ev.name);
    case Key::kCat: return ReadText(v, &ev.cat);
    case Key::kTs: return ReadTime(v, "ts", &ev.ts);
    case Key::kDur: return ReadTime(v, "dur", &ev.dur);
    case Key::kTdur: return ReadTime(v, "tdur", &ev.tdur);
    case Key::kTts: return ReadTime(v, "tts", &ev.tts);
    case Key::kPid: return ReadId(v, &ev.pid.text, &ev.pid.is_number);
    case Key::kTid: return ReadId(v, &ev.tid.text, &ev.tid.is_number);
    case Key::kId: {
      bool num = false;
      ev.has_id = true;
      return ReadId(v, &ev.id, &num);
    }
    case Key::kId2: return ReadId2(v, ev);
    case Key::kBindId: {
      bool num = false;
      ev.has_bind_id = true;
      return ReadId(v, &ev.bind_id, &num);
    }
    case Key::kFlowIn: return ReadBool(v, &ev.flow_in);
    case Key::kFlowOut: return ReadBool(v, &ev.flow_out);
    case Key::kS: return ReadText(v, &ev.s);
    case Key::kBp: return ReadText(v, &ev.bp);
    case Key::kScope: return ReadText(v, &ev.scope);
    case Key::kArgs: return ReadArgs(v, ev);
    case Key::kOther: return Skim(v, 0);
  }
  return absl::OkStatus();
}

absl::Status EventParser::ReadText(Ondemand& v, std::string_view* out) {
  const char* at = v.raw_json_token().data();
  od::json_type t;
  if (auto e = v.type().get(t)) return SimdError(e, at);
  error_code e = simdjson::SUCCESS;
  switch (t) {
    case od::json_type::string:
      e = StringValue(v, out);
      break;
    case od::json_type::null:
      *out = std::string_view();
      return Skim(v, 0);
    default:
      // A number or literal where a string belongs: keep its text, which is
      // what a user would search for ("name": 42 -> "42").
      *out = TrimRight(v.raw_json_token());
      return Skim(v, 0);
  }
  return e ? SimdError(e, at) : absl::OkStatus();
}

absl::Status EventParser::ReadId(Ondemand& v, std::string_view* out,
                                 bool* is_number) {
  const char* at = v.raw_json_token().data();
  od::json_type t;
  if (auto e = v.type().get(t)) return SimdError(e, at);
  if (t == od::json_type::number) {
    std::string_view text = TrimRight(v.raw_json_token());
    if (IsJsonInteger(text)) {
      *out = text;
      *is_number = true;
      return absl::OkStatus();
    }
    // A fractional or exponent id ("1.5"): keep its text as a string id.
    if (!IsJsonNumber(text)) return ErrorAt(at, "a JSON number", Quote(text));
    *out = text;
    *is_number = false;
    return absl::OkStatus();
  }
  if (t == od::json_type::string) {
    *is_number = false;
    if (auto e = StringValue(v, out)) return SimdError(e, at);
    return absl::OkStatus();
  }
  // null, bool, object, array: not an id; keep the default.
  return Skim(v, 0);
}

absl::Status EventParser::ReadTime(Ondemand& v, std::string_view key,
                                   TimeField* out) {
  const char* at = v.raw_json_token().data();
  od::json_type t;
  if (auto e = v.type().get(t)) return SimdError(e, at);
  switch (t) {
    case od::json_type::number: {
      std::string_view text = TrimRight(v.raw_json_token());
      *out = PresentTime(text, at);
      // The fast path accepts only JSON-valid text (but for leading zeros),
      // so the general syntax check is needed only when it declines.
      if (std::optional<NsPs> fast = FastMicros(text);
          fast && (text.size() < 2 || text[0] != '0' || text[1] == '.')) {
        out->parsed = true;
        out->value = *fast;
        return absl::OkStatus();
      }
      if (!IsJsonNumber(text)) return ErrorAt(at, "a JSON number", Quote(text));
      return absl::OkStatus();
    }
    case od::json_type::string: {
      // Some generators quote their numbers; the text is checked when used.
      std::string_view text;
      if (auto e = v.get_string().get(text)) return SimdError(e, at);
      *out = PresentTime(text, at);
      return absl::OkStatus();
    }
    case od::json_type::null:
      *out = TimeField{};
      return Skim(v, 0);
    default:
      return ErrorAt(at, Cat("a number for \"", key, "\""),
                     Quote(TrimRight(v.raw_json_token())));
  }
}

absl::Status EventParser::ReadId2(Ondemand& v, RawEvent& ev) {
  const char* at = v.raw_json_token().data();
  od::json_type t;
  if (auto e = v.type().get(t)) return SimdError(e, at);
  if (t != od::json_type::object) return Skim(v, 0);
  od::object obj;
  if (auto e = v.get_object().get(obj)) return SimdError(e, at);
  for (auto fr : obj) {
    od::field f;
    if (auto e = std::move(fr).get(f)) return SimdError(e, at);
    std::string_view key;
    const char* raw_key = f.key().raw();  // before FieldKey consumes it
    if (auto e = FieldKey(f, &key)) return SimdError(e, raw_key);
    bool num = false;
    absl::Status s;
    if (key == "global") {
      ev.has_id2_global = true;
      s = ReadId(f.value(), &ev.id2_global, &num);
    } else if (key == "local") {
      ev.has_id2_local = true;
      s = ReadId(f.value(), &ev.id2_local, &num);
    } else {
      s = Skim(f.value(), 1);
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status EventParser::ReadBool(Ondemand& v, bool* out) {
  const char* at = v.raw_json_token().data();
  od::json_type t;
  if (auto e = v.type().get(t)) return SimdError(e, at);
  if (t != od::json_type::boolean) return Skim(v, 0);
  if (auto e = v.get_bool().get(*out)) return SimdError(e, at);
  return absl::OkStatus();
}

absl::Status EventParser::ReadArgs(Ondemand& v, RawEvent& ev) {
  const char* at = v.raw_json_token().data();
  od::json_type t;
  if (auto e = v.type().get(t)) return SimdError(e, at);
  if (t == od::json_type::object) {
    // On-Demand has no raw text for objects; the extent comes from the same
    // scanner that delimits events, and Skim below validates the contents.
    if (at[1] == '}') {  // "args":{} on most events
      ev.args = std::string_view(at, 2);
    } else {
      ScanState st;
      size_t avail = static_cast<size_t>(text_ + text_len_ - at);
      size_t len = ScanValue(st, at, avail);
      ev.args = std::string_view(at, len);
    }
  }
  return Skim(v, 0);
}

absl::Status EventParser::Skim(Ondemand& v, int depth) {
  const char* at = v.raw_json_token().data();
  od::json_type t;
  if (auto e = v.type().get(t)) return SimdError(e, at);
  error_code e = simdjson::SUCCESS;
  switch (t) {
    case od::json_type::object: {
      od::object obj;
      if ((e = v.get_object().get(obj))) break;
      for (auto fr : obj) {
        od::field f;
        std::string_view key;
        if ((e = std::move(fr).get(f)) || (e = FieldKey(f, &key))) break;
        if (absl::Status s = Skim(f.value(), depth + 1); !s.ok()) return s;
      }
      break;
    }
    case od::json_type::array: {
      od::array arr;
      if ((e = v.get_array().get(arr))) break;
      for (auto el : arr) {
        od::value item;
        if ((e = std::move(el).get(item))) break;
        if (absl::Status s = Skim(item, depth + 1); !s.ok()) return s;
      }
      break;
    }
    case od::json_type::string: {
      std::string_view s;  // validates the escapes, if any
      e = StringValue(v, &s);
      break;
    }
    case od::json_type::number: {
      double d;
      e = v.get_double().get(d);
      break;
    }
    case od::json_type::boolean: {
      bool b;
      e = v.get_bool().get(b);
      break;
    }
    case od::json_type::null: {
      bool is_null = false;
      e = v.is_null().get(is_null);
      if (!e && !is_null) e = simdjson::N_ATOM_ERROR;
      break;
    }
  }
  return e ? SimdError(e, at) : absl::OkStatus();
}

// ---------------------------------------------------------------- times

absl::StatusOr<int64_t> EventParser::RelativeTime(const TimeField& f,
                                                  std::string_view key) {
  absl::StatusOr<NsPs> t = f.parsed ? f.value : ParseMicrosText(f.text);
  if (!t.ok()) {
    return ErrorAt(f.at,
                   Cat("a number of microseconds for \"", key,
                                "\" within int64 nanoseconds"),
                   Quote(f.text));
  }
  absl::StatusOr<int64_t> rel = sink_->ToRelativePs(t->ns, t->ps);
  if (!rel.ok()) {
    return ErrorAt(f.at,
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
    return ErrorAt(f.at,
                   Cat("a number of microseconds for \"", key,
                                "\" within int64 picoseconds"),
                   Quote(f.text));
  }
  return static_cast<int64_t>(ps);
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

absl::Status EventParser::EmitOnThread(const RawEvent& ev, EventKind kind,
                                       uint32_t flags) {
  absl::StatusOr<int64_t> ts = RelativeTime(ev.ts, "ts");
  if (!ts.ok()) return ts.status();
  Event e;
  e.kind = kind;
  e.track = ThreadTrackFor(ev);
  e.ts = *ts;
  e.name = strings_.Intern(ev.name);
  e.cat = strings_.Intern(ev.cat);
  e.flags = flags;
  e.args_json = ArgsJson(ev);
  if (kind == EventKind::kBegin && (ev.flow_in || ev.flow_out)) {
    // Flow v2 binding points may sit on B as well as on X events.
    std::string_view id = ev.has_bind_id ? ev.bind_id : ev.id;
    uint32_t fid = sink_->Intern(id);
    if (ev.flow_in) e.flow_in = fid;
    if (ev.flow_out) e.flow_out = fid;
  }
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
  // tdur/tts (thread time) have no column in the event model; they are
  // validated (bad text is an error) but not stored.
  for (const auto& [f, key] : {std::pair{&ev.tdur, "tdur"}, std::pair{&ev.tts, "tts"}}) {
    if (f->present && !f->parsed && !ParseMicrosText(f->text).ok()) {
      return ErrorAt(f->at, Cat("a number of microseconds for \"", key, "\""),
                     Quote(f->text));
    }
  }
  Event e;
  e.kind = EventKind::kSlice;
  e.track = ThreadTrackFor(ev);
  e.ts = *ts;
  e.dur = dur;
  e.name = strings_.Intern(ev.name);
  e.cat = strings_.Intern(ev.cat);
  e.args_json = ArgsJson(ev);
  if (ev.flow_in || ev.flow_out) {
    std::string_view id = ev.has_bind_id ? ev.bind_id : ev.id;
    uint32_t fid = sink_->Intern(id);
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
    if (t != od::json_type::number) {
      sink_->CountSkipped("counter arg that is not a number");
      continue;
    }
    const char* at = f.value().raw_json_token().data();
    if ((err = f.value().get_double().get(e.value))) return SimdError(err, at);
    e.track = sink_->CounterTrack(ev.pid, key_buf_, series);
    e.name = strings_.Intern(series);  // event.h: for counters, the series
    ++values;
    if (absl::Status s = Add(e); !s.ok()) return s;
  }
  if (values == 0) sink_->CountSkipped("counter event without numeric args");
  return absl::OkStatus();
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
  std::string_view arg_name, labels;
  bool has_name = false, has_labels = false, has_index = false;
  int64_t index = 0;
  if (!ev.args.empty()) {
    absl::StatusOr<od::object> obj = ParseArgs(ev);
    if (!obj.ok()) return obj.status();
    for (auto fr : *obj) {
      od::field f;
      std::string_view key;
      od::json_type t;
      error_code err;
      if ((err = std::move(fr).get(f)) || (err = f.unescaped_key().get(key)) ||
          (err = f.value().type().get(t))) {
        return SimdError(err, ev.args.data());
      }
      if (key == "name" && t == od::json_type::string) {
        has_name = !f.value().get_string().get(arg_name);
      } else if (key == "labels" && t == od::json_type::string) {
        has_labels = !f.value().get_string().get(labels);
      } else if (key == "sort_index" && t == od::json_type::number) {
        double d = 0;
        if (!f.value().get_double().get(d) && d >= -9.2e18 && d <= 9.2e18) {
          index = static_cast<int64_t>(d);
          has_index = true;
        }
      }
    }
  }
  const bool wants_name = name == "process_name" || name == "thread_name";
  const bool wants_index = name == "process_sort_index" || name == "thread_sort_index";
  if ((wants_name && !has_name) || (wants_index && !has_index) ||
      (name == "process_labels" && !has_labels)) {
    sink_->CountSkipped(Cat("metadata '", name, "' without its arg"));
    return absl::OkStatus();
  }
  if (name == "process_name") sink_->SetProcessName(ev.pid, arg_name);
  if (name == "thread_name") sink_->SetThreadName(ev.pid, ev.tid, arg_name);
  if (name == "process_sort_index") sink_->SetProcessSortIndex(ev.pid, index);
  if (name == "thread_sort_index") sink_->SetThreadSortIndex(ev.pid, ev.tid, index);
  if (name == "process_labels") {
    // Chrome writes the labels as one comma-separated string.
    for (absl::string_view label :
         absl::StrSplit(AbslView(labels), ',', absl::SkipEmpty())) {
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
  uint32_t flags = ev.bp == "e" ? uint32_t{kFlagBindEnclosing} : 0u;
  absl::StatusOr<int64_t> ts = RelativeTime(ev.ts, "ts");
  if (!ts.ok()) return ts.status();
  Event e;
  e.kind = kind;
  e.track = ThreadTrackFor(ev);
  e.ts = *ts;
  e.name = strings_.Intern(ev.name);
  e.cat = strings_.Intern(ev.cat);
  e.flags = flags;
  e.flow_id = sink_->Intern(key_buf_);
  e.args_json = ArgsJson(ev);
  return Add(e);
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
  e.flow_id = sink_->Intern(key_buf_);
  e.args_json = ArgsJson(ev);
  return Add(e);
}

void EventParser::Finish() {
  if (x_without_dur_ > 0) {
    sink_->Warn(Cat(errors_->path, ": ", x_without_dur_,
                             " 'X' events without \"dur\" read as zero-length"));
  }
}

}  // namespace tracetable::chrome_json
