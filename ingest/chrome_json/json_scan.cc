#include "ingest/chrome_json/json_scan.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <cctype>
#include <vector>

#include "ingest/chrome_json/input_error.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// The AVX2 scan is compiled for its own target and chosen at run time.
#if defined(__x86_64__) && defined(__GNUC__)
#define TT_SCAN_AVX2 1
#include <immintrin.h>
#else
#define TT_SCAN_AVX2 0
#endif

namespace tracetable::chrome_json {
namespace {

// Bytes that matter to ScanValue outside strings (1) and inside strings (2).
constexpr std::array<uint8_t, 256> MakeTable(bool in_string) {
  std::array<uint8_t, 256> t{};
  if (in_string) {
    t['"'] = 1;
    t['\\'] = 1;
  } else {
    t['"'] = 1;
    t['{'] = 1;
    t['}'] = 1;
    t['['] = 1;
    t[']'] = 1;
  }
  return t;
}
constexpr std::array<uint8_t, 256> kOutside = MakeTable(false);
constexpr std::array<uint8_t, 256> kInside = MakeTable(true);

inline uint8_t U(char c) { return static_cast<uint8_t>(c); }

bool IsScalarDelimiter(char c) {
  return c == ',' || c == '}' || c == ']' || c == ':' || IsJsonSpace(c);
}

size_t ScanScalar(ScanState& st, const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (IsScalarDelimiter(p[i])) {
      st.done = true;
      return i;
    }
  }
  return n;
}

// Byte-at-a-time scan; used for strings at depth 0 and where no SIMD is
// available.
size_t ScanBytes(ScanState& st, const char* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (st.in_string) {
      if (st.escape) {
        st.escape = false;
        ++i;
        continue;
      }
      while (i < n && !kInside[U(p[i])]) ++i;
      if (i == n) break;
      if (p[i++] == '\\') {
        st.escape = true;
        continue;
      }
      st.in_string = false;
      if (st.depth == 0) {  // the value was a string
        st.done = true;
        return i;
      }
      continue;
    }
    while (i < n && !kOutside[U(p[i])]) ++i;
    if (i == n) break;
    char c = p[i++];
    if (c == '"') {
      st.in_string = true;
    } else if (c == '{' || c == '[') {
      ++st.depth;
    } else if (st.depth <= 1) {
      // Closing the outermost bracket (or a stray closer, which the parser
      // that gets this extent reports as a syntax error).
      st.depth = 0;
      st.done = true;
      return i;
    } else {
      --st.depth;
    }
  }
  return n;
}

#if defined(__SSE2__)
// The classification of 64 input bytes as bit masks (bit k = byte k).
struct BlockMasks {
  uint64_t quote, backslash, open, close;
};

inline uint64_t Movemask(__m128i v) {
  return static_cast<uint32_t>(_mm_movemask_epi8(v));
}

inline BlockMasks Classify64(const char* p) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  // '{' | 0x20 == '{' and '[' | 0x20 == '{'; the same for '}' and ']'.
  const __m128i lower = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  BlockMasks m{0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    __m128i folded = _mm_or_si128(v, lower);
    m.quote |= Movemask(_mm_cmpeq_epi8(v, quote)) << (16 * k);
    m.backslash |= Movemask(_mm_cmpeq_epi8(v, backslash)) << (16 * k);
    m.open |= Movemask(_mm_cmpeq_epi8(folded, open)) << (16 * k);
    m.close |= Movemask(_mm_cmpeq_epi8(folded, close)) << (16 * k);
  }
  return m;
}

// Bits of characters escaped by a backslash (simdjson's branchless method):
// a run of backslashes escapes the character after it if its length is odd.
// `carry` says the first byte of the block is escaped, and is updated.
inline uint64_t EscapedBits(uint64_t backslash, bool& carry) {
  const uint64_t prev = carry ? 1 : 0;
  backslash &= ~prev;
  const uint64_t follows_escape = backslash << 1 | prev;
  const uint64_t even_bits = 0x5555555555555555ULL;
  const uint64_t odd_starts = backslash & ~even_bits & ~follows_escape;
  uint64_t even_starts;
  carry = __builtin_add_overflow(odd_starts, backslash, &even_starts);
  const uint64_t invert = even_starts << 1;
  return (even_bits ^ invert) & follows_escape;
}

inline uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// Scans one 64-byte block of a container whose state is `st`. `valid` is
// how many bytes are real (the rest is padding). Returns the byte count up
// to and including the closing bracket, or `valid` if the value goes on.
inline size_t ScanBlock(ScanState& st, const char* p, size_t valid) {
  BlockMasks m = Classify64(p);
  bool carry = st.escape;
  const uint64_t escaped = EscapedBits(m.backslash, carry);
  const uint64_t quotes = m.quote & ~escaped;
  // Bit k set: byte k is inside a string (opening quote included).
  const uint64_t in_string = PrefixXor(quotes) ^ (st.in_string ? ~0ULL : 0ULL);
  uint64_t brackets = (m.open | m.close) & ~in_string;
  const uint64_t valid_mask = valid == 64 ? ~0ULL : ((1ULL << valid) - 1);
  brackets &= valid_mask;
  while (brackets != 0) {
    const int k = __builtin_ctzll(brackets);
    brackets &= brackets - 1;
    if ((m.open >> k) & 1) {
      ++st.depth;
    } else if (st.depth <= 1) {
      st.depth = 0;
      st.done = true;
      st.in_string = false;
      st.escape = false;
      return static_cast<size_t>(k) + 1;
    } else {
      --st.depth;
    }
  }
  if (valid == 64) {
    st.in_string = (in_string >> 63) & 1;
    st.escape = carry;
  } else {
    // Padding bytes hold no quotes, so the string state at the last real
    // byte carries over; an escape pending there shows on the first pad.
    st.in_string = (in_string >> (valid - 1)) & 1;
    st.escape = (escaped >> valid) & 1;
  }
  return valid;
}

size_t ScanContainer(ScanState& st, const char* p, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    size_t used = ScanBlock(st, p + i, 64);
    if (st.done) return i + used;
  }
  if (i < n) {
    alignas(16) char tail[64];
    std::memset(tail, ' ', sizeof tail);
    std::memcpy(tail, p + i, n - i);
    size_t used = ScanBlock(st, tail, n - i);
    if (st.done) return i + used;
  }
  return n;
}
// The bracket loop of one block, shared by the instruction sets: updates
// depth and last_end (offsets from `at`); false at the array's own ']' (or
// a stray closer), where the scan stops.
[[gnu::always_inline]] inline bool ConsumeBrackets(uint64_t brackets, uint64_t open, size_t at,
                                                   uint32_t& depth, size_t& last_end) {
  while (brackets != 0) {
    const int k = __builtin_ctzll(brackets);
    brackets &= brackets - 1;
    if ((open >> k) & 1) {
      ++depth;
    } else if (depth == 0) {
      return false;
    } else if (--depth == 0) {
      last_end = at + static_cast<size_t>(k) + 1;
    }
  }
  return true;
}

// The 64-byte block at p + i, or its `valid` < 64 bytes padded with spaces
// in `tail` at the end of the text.
[[gnu::always_inline]] inline const char* Block64(const char* p, size_t i, size_t valid, char* tail) {
  if (valid == 64) return p + i;
  std::memset(tail, ' ', 64);
  std::memcpy(tail, p + i, valid);
  return tail;
}

// A block's brackets outside strings, given its masks and the prefix xor
// of its unescaped quotes: updates the scan's state; false where the scan
// stops (ConsumeBrackets).
[[gnu::always_inline]] inline bool EndBlock(uint64_t quote_prefix, uint64_t opens, uint64_t closes, size_t valid,
                                            size_t at, bool& in_str, uint32_t& depth, size_t& last_end) {
  const uint64_t in_string = quote_prefix ^ (in_str ? ~0ULL : 0ULL);
  uint64_t brackets = (opens | closes) & ~in_string;
  if (valid < 64) brackets &= (1ULL << valid) - 1;
  if (!ConsumeBrackets(brackets, opens, at, depth, last_end)) return false;
  in_str = (in_string >> 63) & 1;
  return true;
}

size_t ScanElementsSse2(const char* p, size_t n) {
  uint32_t depth = 0;
  bool in_str = false, carry = false;
  size_t last_end = 0;
  for (size_t i = 0; i < n; i += 64) {
    const size_t valid = std::min<size_t>(64, n - i);
    alignas(16) char tail[64];
    const BlockMasks m = Classify64(Block64(p, i, valid, tail));
    const uint64_t escaped = EscapedBits(m.backslash, carry);
    if (!EndBlock(PrefixXor(m.quote & ~escaped), m.open, m.close, valid, i, in_str, depth, last_end)) break;
  }
  return last_end;
}
#endif  // __SSE2__

#if TT_SCAN_AVX2
__attribute__((target("avx2"))) inline uint64_t Mask64(__m256i lo, __m256i hi) {
  return static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(lo))) |
         static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(hi))) << 32;
}

// AVX2 and PCLMUL, chosen at run time: 64 bytes in two loads, and the
// string mask's prefix xor in one carry-less multiply instead of six
// shift-xor steps on the block's critical path.
__attribute__((target("avx2,pclmul"))) size_t ScanElementsAvx2(const char* p, size_t n) {
  const __m256i quote = _mm256_set1_epi8('"');
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i lower = _mm256_set1_epi8(0x20);
  const __m256i open = _mm256_set1_epi8('{');
  const __m256i close = _mm256_set1_epi8('}');
  const __m128i ones = _mm_set1_epi8(static_cast<char>(0xFF));
  uint32_t depth = 0;
  bool in_str = false, carry = false;
  size_t last_end = 0;
  for (size_t i = 0; i < n; i += 64) {
    const size_t valid = std::min<size_t>(64, n - i);
    alignas(32) char tail[64];
    const char* block = Block64(p, i, valid, tail);
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32));
    const __m256i lo_folded = _mm256_or_si256(lo, lower), hi_folded = _mm256_or_si256(hi, lower);
    const uint64_t quotes = Mask64(_mm256_cmpeq_epi8(lo, quote), _mm256_cmpeq_epi8(hi, quote));
    const uint64_t backslashes = Mask64(_mm256_cmpeq_epi8(lo, backslash), _mm256_cmpeq_epi8(hi, backslash));
    const uint64_t opens = Mask64(_mm256_cmpeq_epi8(lo_folded, open), _mm256_cmpeq_epi8(hi_folded, open));
    const uint64_t closes = Mask64(_mm256_cmpeq_epi8(lo_folded, close), _mm256_cmpeq_epi8(hi_folded, close));
    const uint64_t escaped = EscapedBits(backslashes, carry);
    const __m128i q = _mm_set_epi64x(0, static_cast<int64_t>(quotes & ~escaped));
    const uint64_t prefix = static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_clmulepi64_si128(q, ones, 0)));
    if (!EndBlock(prefix, opens, closes, valid, i, in_str, depth, last_end)) break;
  }
  return last_end;
}
#endif  // TT_SCAN_AVX2

size_t ScanElementsBytes(const char* p, size_t n) {
  uint32_t depth = 0;
  bool in_str = false, escape = false;
  size_t last_end = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = p[i];
    if (in_str) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_str = false;
      }
    } else if (c == '"') {
      in_str = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return last_end;
      if (--depth == 0) last_end = i + 1;
    }
  }
  return last_end;
}

}  // namespace

bool ScanIsaSupported(ScanIsa isa) {
  switch (isa) {
    case ScanIsa::kBytes: return true;
#if defined(__SSE2__)
    case ScanIsa::kSse2: return true;
#endif
#if TT_SCAN_AVX2
    case ScanIsa::kAvx2: {
      static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul");
      return has;
    }
#endif
    default: return false;
  }
}

size_t ScanCompleteElementsWith(ScanIsa isa, const char* p, size_t n) {
  switch (isa) {
#if TT_SCAN_AVX2
    case ScanIsa::kAvx2: return ScanElementsAvx2(p, n);
#endif
#if defined(__SSE2__)
    case ScanIsa::kSse2: return ScanElementsSse2(p, n);
#endif
    default: return ScanElementsBytes(p, n);
  }
}

size_t ScanCompleteElements(const char* p, size_t n) {
  static const ScanIsa best = ScanIsaSupported(ScanIsa::kAvx2)   ? ScanIsa::kAvx2
                              : ScanIsaSupported(ScanIsa::kSse2) ? ScanIsa::kSse2
                                                                 : ScanIsa::kBytes;
  return ScanCompleteElementsWith(best, p, n);
}

size_t ScanValue(ScanState& st, const char* p, size_t n) {
  size_t i = 0;
  if (!st.started && n > 0) {
    st.started = true;
    if (p[0] == '"') {
      st.in_string = true;
      i = 1;
    } else if (p[0] != '{' && p[0] != '[') {
      st.scalar = true;
    }
  }
  if (st.scalar) return ScanScalar(st, p, n);
  if (st.depth == 0 && i == 1) return 1 + ScanBytes(st, p + 1, n - 1);
  if (st.depth == 0 && st.in_string) return ScanBytes(st, p, n);
#if defined(__SSE2__)
  return ScanContainer(st, p, n);
#else
  return ScanBytes(st, p, n);
#endif
}

namespace {

constexpr size_t kMaxDepth = 1024;  // simdjson's default

// A JSON grammar checker over a complete text or a prefix of one.
class SyntaxChecker {
 public:
  SyntaxChecker(std::string_view text, PrefixMode mode)
      : t_(text), prefix_ok_(mode == PrefixMode::kPrefixOk) {}

  std::optional<SyntaxError> Run();

 private:
  enum Mode { kValue, kValueOrClose, kKey, kKeyOrClose, kColon, kAfter, kEnd };

  std::optional<SyntaxError> Fail(size_t at, std::string expected) const {
    return SyntaxError{at, std::move(expected),
                       at < t_.size() ? DescribeByte(&t_[at]) : "end of file"};
  }
  // At the end of the text: fine for a prefix, else `expected` is missing.
  std::optional<SyntaxError> AtEnd(std::string expected) const {
    if (prefix_ok_) return std::nullopt;
    return Fail(t_.size(), std::move(expected));
  }
  void AfterValue() { mode_ = stack_.empty() ? kEnd : kAfter; }
  void Pop() {
    stack_.pop_back();
    AfterValue();
  }
  std::optional<SyntaxError> Push(char c);
  // Each reads one token at i_; on error or end of text, *stop is set.
  std::optional<SyntaxError> String(bool* stop);
  std::optional<SyntaxError> Number(bool* stop);
  std::optional<SyntaxError> Literal(bool* stop);
  std::optional<SyntaxError> Value(bool* stop);
  std::optional<SyntaxError> After(bool* stop);
  std::string ExpectedAtEnd() const;

  std::string_view t_;
  bool prefix_ok_;
  size_t i_ = 0;
  Mode mode_ = kValue;
  std::vector<char> stack_;
};

std::string SyntaxChecker::ExpectedAtEnd() const {
  switch (mode_) {
    case kValue: return "a JSON value";
    case kValueOrClose: return "a JSON value or ']'";
    case kKey: return "a string key";
    case kKeyOrClose: return "a string key or '}'";
    case kColon: return "':'";
    case kAfter: return stack_.back() == '{' ? "',' or '}'" : "',' or ']'";
    case kEnd: return "end of input";
  }
  return "";
}

std::optional<SyntaxError> SyntaxChecker::Push(char c) {
  if (stack_.size() >= kMaxDepth) {
    return Fail(i_, "nesting under 1024 levels");
  }
  stack_.push_back(c);
  mode_ = c == '{' ? kKeyOrClose : kValueOrClose;
  ++i_;
  return std::nullopt;
}

std::optional<SyntaxError> SyntaxChecker::String(bool* stop) {
  const size_t n = t_.size();
  size_t j = i_ + 1;
  while (j < n) {
    char c = t_[j];
    if (c == '"') {
      i_ = j + 1;
      return std::nullopt;
    }
    if (U(c) < 0x20) {
      *stop = true;
      return Fail(j, "a string character (control characters must be escaped)");
    }
    if (c != '\\') {
      ++j;
      continue;
    }
    if (j + 1 >= n) break;
    char e = t_[j + 1];
    if (e == 'u') {
      for (size_t k = j + 2; k < j + 6; ++k) {
        if (k >= n) {
          *stop = true;
          return AtEnd("4 hex digits");
        }
        if (!std::isxdigit(U(t_[k]))) {
          *stop = true;
          return Fail(k, "a hex digit of a \\u escape");
        }
      }
      j += 6;
      continue;
    }
    if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
      *stop = true;
      return Fail(j + 1, "an escape character (one of \"\\/bfnrtu)");
    }
    j += 2;
  }
  *stop = true;
  return AtEnd("'\"' closing the string");
}

std::optional<SyntaxError> SyntaxChecker::Number(bool* stop) {
  const size_t n = t_.size();
  size_t j = i_;
  auto digits = [&](const char* what) -> std::optional<SyntaxError> {
    if (j >= n) {
      *stop = true;
      return AtEnd(what);
    }
    if (!std::isdigit(U(t_[j]))) {
      *stop = true;
      return Fail(j, what);
    }
    while (j < n && std::isdigit(U(t_[j]))) ++j;
    return std::nullopt;
  };
  if (t_[j] == '-') ++j;
  if (j < n && t_[j] == '0') {
    ++j;
  } else if (auto e = digits("a digit"); *stop) {
    return e;
  }
  if (j < n && t_[j] == '.') {
    ++j;
    if (auto e = digits("a digit after '.'"); *stop) return e;
  }
  if (j < n && (t_[j] == 'e' || t_[j] == 'E')) {
    ++j;
    if (j < n && (t_[j] == '+' || t_[j] == '-')) ++j;
    if (auto e = digits("a digit of the exponent"); *stop) return e;
  }
  i_ = j;
  return std::nullopt;
}

std::optional<SyntaxError> SyntaxChecker::Literal(bool* stop) {
  const char* word = t_[i_] == 't' ? "'true'" : t_[i_] == 'f' ? "'false'" : "'null'";
  const size_t len = std::strlen(word) - 2;  // without the quotes
  for (size_t k = 0; k < len; ++k) {
    if (i_ + k >= t_.size()) {
      *stop = true;
      return AtEnd(word);
    }
    if (t_[i_ + k] != word[k + 1]) {
      *stop = true;
      return Fail(i_ + k, word);
    }
  }
  i_ += len;
  return std::nullopt;
}

std::optional<SyntaxError> SyntaxChecker::Value(bool* stop) {
  char c = t_[i_];
  if (mode_ == kValueOrClose && c == ']') {
    ++i_;
    Pop();
    return std::nullopt;
  }
  if (c == '{' || c == '[') {
    auto e = Push(c);
    if (e) *stop = true;
    return e;
  }
  std::optional<SyntaxError> e;
  if (c == '"') {
    e = String(stop);
  } else if (c == '-' || std::isdigit(U(c))) {
    e = Number(stop);
  } else if (c == 't' || c == 'f' || c == 'n') {
    e = Literal(stop);
  } else {
    *stop = true;
    return Fail(i_, ExpectedAtEnd());
  }
  if (!*stop) AfterValue();
  return e;
}

std::optional<SyntaxError> SyntaxChecker::After(bool* stop) {
  char c = t_[i_];
  char close = stack_.back() == '{' ? '}' : ']';
  if (c == ',') {
    ++i_;
    mode_ = stack_.back() == '{' ? kKey : kValue;
  } else if (c == close) {
    ++i_;
    Pop();
  } else {
    *stop = true;
    return Fail(i_, ExpectedAtEnd());
  }
  return std::nullopt;
}

std::optional<SyntaxError> SyntaxChecker::Run() {
  const size_t n = t_.size();
  while (true) {
    while (i_ < n && IsJsonSpace(t_[i_])) ++i_;
    if (i_ == n) {
      if (mode_ == kEnd) return std::nullopt;
      return AtEnd(ExpectedAtEnd());
    }
    bool stop = false;
    std::optional<SyntaxError> e;
    switch (mode_) {
      case kEnd:
        return Fail(i_, "end of input");
      case kColon:
        if (t_[i_] != ':') return Fail(i_, "':'");
        ++i_;
        mode_ = kValue;
        continue;
      case kKeyOrClose:
        if (t_[i_] == '}') {
          ++i_;
          Pop();
          continue;
        }
        [[fallthrough]];
      case kKey:
        if (t_[i_] != '"') return Fail(i_, ExpectedAtEnd());
        e = String(&stop);
        if (!stop) mode_ = kColon;
        break;
      case kValue:
      case kValueOrClose:
        e = Value(&stop);
        break;
      case kAfter:
        e = After(&stop);
        break;
    }
    if (stop) return e;
  }
}

}  // namespace

std::optional<SyntaxError> FindJsonSyntaxError(std::string_view text,
                                               PrefixMode mode) {
  return SyntaxChecker(text, mode).Run();
}

size_t FindInvalidUtf8(std::string_view text) {
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    uint8_t c = U(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      uint8_t cc = U(text[i + k]);
      if ((cc & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
        (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return i;
    }
    i += len;
  }
  return n;
}

}  // namespace tracetable::chrome_json
