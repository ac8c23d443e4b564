#include "ingest/chrome_json/event_parser.h"

#include <cctype>
#include <cstring>
#include <optional>
#include <utility>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ingest/chrome_json/str.h"
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

// If p[0, 8) are all ASCII digits, stores their value (SWAR, after
// simdjson's and fast_float's parse_eight_digits) and returns true.
inline bool EightDigits(const char* p, uint64_t* out) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if ((((v & 0xF0F0F0F0F0F0F0F0ULL) |
        (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) !=
       0x3333333333333333ULL)) {
    return false;
  }
  v = (v & 0x0F0F0F0F0F0F0F0FULL) * 2561 >> 8;
  v = (v & 0x00FF00FF00FF00FFULL) * 6553601 >> 16;
  *out = (v & 0x0000FFFF0000FFFFULL) * 42949672960001ULL >> 32;
  return true;
}

}  // namespace

std::optional<NsPs> FastMicros(std::string_view t) {
  static constexpr uint64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  const char* p = t.data();
  const char* const end = p + t.size();
  const char* q = p;
  uint64_t whole = 0;  // may wrap past 20 digits; rejected below anyway
  // Eight digits at a time while they last (epoch timestamps have 16).
  uint64_t eight;
  while (end - q >= 8 && EightDigits(q, &eight)) {
    whole = whole * 100000000 + eight;
    q += 8;
  }
  for (; q < end; ++q) {
    const unsigned d = static_cast<unsigned char>(*q) - unsigned{'0'};
    if (d > 9) break;
    whole = whole * 10 + d;
  }
  const size_t whole_digits = static_cast<size_t>(q - p);
  // whole * 1000 + 999 must fit int64: up to 16 digits (epoch microseconds,
  // 1.7e15, have 16) below kMaxWhole; anything longer wrapped above.
  constexpr uint64_t kMaxWhole = (uint64_t{INT64_MAX} - 999) / 1000;
  if (whole_digits == 0 || whole_digits > 16 || whole > kMaxWhole) return std::nullopt;
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

// The first '"' or '\\' at or after p, 16 bytes at a time (names are
// mostly 10-30 bytes: one or two steps). Callers stay inside a validated
// string, so one of them comes before the end of the text, and the
// text's padding (InputWindow::kPadding, 128 bytes) keeps the 16-byte
// reads in bounds.
inline const char* FindQuoteOrBackslash(const char* p) {
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  while (true) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const unsigned m = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(w, quote), _mm_cmpeq_epi8(w, backslash))));
    if (m != 0) return p + __builtin_ctz(m);
    p += 16;
  }
#else
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
#endif
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
  if (*error_reason_ == '\0') error_reason_ = "event with broken JSON";
  if (batch_mode_) {
    // Reread one at a time: the reader then skips just this event.
    batch_json_error_ = true;
    return absl::InvalidArgumentError("event error in a batch (reread)");
  }
  return errors_->Error(OffsetOf(at), expected, got);
}

absl::Status EventParser::TimeError(const char* at, std::string_view expected,
                                    std::string_view got) const {
  error_reason_ = "event with a bad time value";
  return ErrorAt(at, expected, got);
}

absl::Status EventParser::SimdError(error_code err, const char* at) const {
  error_reason_ = err == simdjson::UTF8_ERROR ? "event with invalid UTF-8"
                  : err == simdjson::DEPTH_ERROR ? "event nested over 1024 levels deep"
                  : err == simdjson::NUMBER_ERROR || err == simdjson::NUMBER_OUT_OF_RANGE
                      ? "event with a number out of range"
                      : "event with broken JSON";
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
// Field by field: a TimeField built aside and copied in was read back whole
// right after its fields were stored one by one, and the copy waited on
// them (store forwarding fails).
void SetPresentTime(EventParser::TimeField* f, std::string_view text, const char* at) {
  f->text = text;
  f->at = at;
  f->present = true;
  f->parsed = false;
}

// simdjson sizes its index to the text it is given and allocates again for
// any longer one; runs of about 1 MiB differ by a few kilobytes, so each
// new longest run reallocated ~6 MB of index, whose pages the kernel clears
// when first touched (gen 1M: 5 times a worker, ~10% of its CPU in
// clear_page). Room for a quarter more makes that once or twice.
void ReserveFor(od::parser& parser, size_t n) {
  if (parser.capacity() >= n) return;
  // A failure here leaves iterate to allocate exactly, and report it.
  [[maybe_unused]] const simdjson::error_code ignored = parser.allocate(n + n / 4);
}
}  // namespace

absl::Status EventParser::Parse(const char* p, size_t n, const char* alloc_end,
                                uint64_t offset) {
  text_ = p;
  text_len_ = n;
  alloc_end_ = alloc_end;
  offset_ = offset;
  error_reason_ = "";
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
  doc_ = &doc;
  struct ClearDoc {
    od::document** slot;
    ~ClearDoc() { *slot = nullptr; }
  } clear_doc{&doc_};
  RawEvent ev;
  ev.at = at;
  for (auto fr : obj) {
    if (auto e = fr.error()) {
      const char* loc = nullptr;
      if (doc.current_location().get(loc)) loc = nullptr;
      return SimdError(e, loc);
    }
    // In place: copying the field out (get) reloaded its iterator whole
    // right after it was stored in parts, and the load waited on the stores.
    if (absl::Status s = ReadField(fr.value_unsafe(), ev); !s.ok()) return s;
  }
  // Perfetto's reading: an event without a tid is on its process's main
  // thread, whose tid is the pid.
  if (!ev.has_tid) ev.tid = ev.pid;
  if (batch_mode_) HintNextName(doc);
  return Emit(ev);
}

namespace {

constexpr char kNameKey[] = "\"name\":\"";
constexpr size_t kNameKeyLen = sizeof(kNameKey) - 1;

bool IsNameKey(const char* p) {
  uint64_t a = 0, b = 0;
  std::memcpy(&a, p, sizeof(a));
  std::memcpy(&b, kNameKey, sizeof(b));
  return a == b;
}

// The first `"name":"` starting in [p, p + n), or null; reads up to 16 bytes
// past p + n (the batch text is padded far beyond that). Sixteen positions
// per step: a candidate has 'n' at +1 and 'e' at +4, checked whole after.
const char* FindNameKey(const char* p, size_t n) {
#ifdef __SSE2__
  const __m128i n_char = _mm_set1_epi8('n'), e_char = _mm_set1_epi8('e');
  for (size_t i = 0; i < n; i += 16) {
    const __m128i at1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 1));
    const __m128i at4 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 4));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_and_si128(_mm_cmpeq_epi8(at1, n_char), _mm_cmpeq_epi8(at4, e_char))));
    while (mask != 0) {
      const size_t k = i + static_cast<size_t>(__builtin_ctz(mask));
      if (k >= n) return nullptr;
      if (IsNameKey(p + k)) return p + k;
      mask &= mask - 1;
    }
  }
  return nullptr;
#else
  for (size_t k = 0; k < n; ++k) {
    if (IsNameKey(p + k)) return p + k;
  }
  return nullptr;
#endif
}

}  // namespace

void EventParser::HintNextName(od::document& doc) {
  // Far enough for the usual field orders; a miss only loses the hint.
  constexpr size_t kWindow = 256;
  const char* from = nullptr;
  if (doc.current_location().get(from) || from == nullptr) return;
  const char* end = text_ + text_len_;
  if (from + kNameKeyLen >= end) return;
  const size_t window = std::min<size_t>(static_cast<size_t>(end - from) - kNameKeyLen, kWindow);
  const char* key = FindNameKey(from, window);
  if (key == nullptr) return;
  const std::string_view rest(key + kNameKeyLen, static_cast<size_t>(end - key) - kNameKeyLen);
  const size_t e = rest.find('"');
  if (e == std::string_view::npos) return;
  const std::string_view name = rest.substr(0, e);
  if (name.find('\\') != std::string_view::npos) return;
  strings_.Prefetch(name);
}

absl::Status EventParser::ParseBatch(const char* p, size_t n,
                                     const char* alloc_end, uint64_t offset,
                                     const char** resume) {
  text_ = p;
  text_len_ = n;
  alloc_end_ = alloc_end;
  offset_ = offset;
  *resume = nullptr;
  error_reason_ = "";
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
  ReserveFor(parser_, n);
  if (parser_.iterate(p, n, static_cast<size_t>(alloc_end - p)).get(doc) ||
      doc.get_array().get(arr)) {
    return stop();
  }
  for (auto er : arr) {
    od::json_type t;
    if (er.error()) return stop();
    od::value& v = er.value_unsafe();  // in place, as in ParseObject
    if (v.type().get(t)) return stop();
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

// Inlined into the field loop: a call per field (70M on gen 10M) cost more
// than the body's dispatch.
[[gnu::always_inline]] inline absl::Status EventParser::ReadField(od::field& f, RawEvent& ev) {
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
    case Key::kTid:
      ev.has_tid = true;
      return ReadId(v, &ev.tid.text, &ev.tid.is_number);
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
      SetPresentTime(out, text, at);
      // The fast path accepts only JSON-valid text (but for leading zeros),
      // so the general syntax check is needed only when it declines.
      if (std::optional<NsPs> fast = FastMicros(text);
          fast && (text.size() < 2 || text[0] != '0' || text[1] == '.')) {
        out->parsed = true;
        out->value = *fast;
        return absl::OkStatus();
      }
      if (!IsJsonNumber(text)) return TimeError(at, "a JSON number", Quote(text));
      return absl::OkStatus();
    }
    case od::json_type::string: {
      // Some generators quote their numbers; the text is checked when used.
      std::string_view text;
      if (auto e = v.get_string().get(text)) return SimdError(e, at);
      SetPresentTime(out, text, at);
      return absl::OkStatus();
    }
    case od::json_type::null:
      *out = TimeField{};
      return Skim(v, 0);
    default:
      return TimeError(at, Cat("a number for \"", key, "\""),
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
  if (t != od::json_type::object) return Skim(v, 0);
  if (at[1] == '}') {  // "args":{} on most events
    ev.args = std::string_view(at, 2);
    return Skim(v, 0);
  }
  // On-Demand has no raw text for objects. Once Skim has walked (and
  // validated) the object, the parser stands on the token after it: the
  // object ends at the last non-blank byte before that.
  if (absl::Status s = Skim(v, 0); !s.ok()) return s;
  const char* next = nullptr;
  if (doc_ != nullptr && !doc_->current_location().get(next) && next > at &&
      next <= text_ + text_len_) {
    while (next > at && IsJsonSpace(next[-1])) --next;
    if (next[-1] == '}') {
      ev.args = std::string_view(at, static_cast<size_t>(next - at));
      return absl::OkStatus();
    }
  }
  ScanState st;  // not expected; the scanner finds the extent the slow way
  ev.args = std::string_view(at, ScanValue(st, at, static_cast<size_t>(text_ + text_len_ - at)));
  return absl::OkStatus();
}

absl::Status EventParser::Skim(Ondemand& v, int depth) {
  const char* at = v.raw_json_token().data();
  if (depth >= kMaxNesting) {
    error_reason_ = "event nested over 1024 levels deep";
    return ErrorAt(at, "nesting under 1024 levels", "deeper nesting inside an event");
  }
  od::json_type t;
  if (auto e = v.type().get(t)) return SimdError(e, at);
  error_code e = simdjson::SUCCESS;
  switch (t) {
    case od::json_type::object: {
      od::object obj;
      if ((e = v.get_object().get(obj))) break;
      for (auto fr : obj) {
        std::string_view key;
        if ((e = fr.error()) || (e = FieldKey(fr.value_unsafe(), &key))) break;
        if (absl::Status s = Skim(fr.value_unsafe().value(), depth + 1); !s.ok()) return s;
      }
      break;
    }
    case od::json_type::array: {
      od::array arr;
      if ((e = v.get_array().get(arr))) break;
      for (auto el : arr) {
        if ((e = el.error())) break;
        if (absl::Status s = Skim(el.value_unsafe(), depth + 1); !s.ok()) return s;
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

}  // namespace tracetable::chrome_json
