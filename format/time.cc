#include "format/time.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"

namespace tracetable {
namespace {

constexpr __int128 kMaxAbsPs = static_cast<__int128>(INT64_MAX) * 1000;

absl::Status NotANumber(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("expected a time number, got '", Av(text.substr(0, 40)), "': ", Av(why)));
}

}  // namespace

absl::StatusOr<NsPs> ParseTimeText(std::string_view text, int64_t ps_per_unit) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    negative = text[i] == '-';
    ++i;
  }
  // Collect significant digits as mantissa * 10^exp10, keeping at most 36
  // digits (more cannot change a picosecond value below 1e36 ps).
  __int128 mantissa = 0;
  int exp10 = 0;
  int digits = 0;
  bool any = false;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    any = true;
    if (digits < 36) {
      mantissa = mantissa * 10 + (text[i] - '0');
      if (mantissa != 0) ++digits;
    } else {
      ++exp10;
    }
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      any = true;
      if (digits < 36) {
        mantissa = mantissa * 10 + (text[i] - '0');
        if (mantissa != 0) ++digits;
        --exp10;
      }
    }
  }
  if (!any) return NotANumber(text, "no digits");
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
      eneg = text[i] == '-';
      ++i;
    }
    int e = 0;
    bool edigits = false;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      edigits = true;
      if (e < 100000) e = e * 10 + (text[i] - '0');
    }
    if (!edigits) return NotANumber(text, "exponent has no digits");
    exp10 += eneg ? -e : e;
  }
  if (i != text.size()) return NotANumber(text, "unexpected character");

  // value_ps = mantissa * 10^exp10 * ps_per_unit. 36 digits times the unit
  // can exceed __int128: drop low digits first, remembering whether they
  // were zero (they are below a picosecond whenever the value is in range).
  bool dropped_nonzero = false;
  while (mantissa > (static_cast<__int128>(1) << 125) / ps_per_unit) {
    dropped_nonzero = dropped_nonzero || mantissa % 10 != 0;
    mantissa /= 10;
    ++exp10;
  }
  __int128 ps = mantissa * ps_per_unit;
  if (mantissa != 0) {
    if (exp10 > 0) {
      for (int k = 0; k < exp10; ++k) {
        if (ps > kMaxAbsPs) return NotANumber(text, "out of range");
        ps *= 10;
      }
      if (ps > kMaxAbsPs) return NotANumber(text, "out of range");
    } else {
      for (int k = 0; k < -exp10 && ps != 0; ++k) {
        // Truncation toward -inf for negatives is handled below.
        if (negative && (ps % 10 != 0 || dropped_nonzero)) {
          dropped_nonzero = false;
          ps = ps / 10 + 1;
        } else {
          ps /= 10;
        }
      }
    }
  }
  if (ps > kMaxAbsPs) return NotANumber(text, "out of range");
  if (negative) ps = -ps;
  NsPs out;
  __int128 ns = ps / 1000;
  __int128 rem = ps % 1000;
  if (rem < 0) {
    rem += 1000;
    ns -= 1;
  }
  out.ns = static_cast<int64_t>(ns);
  out.ps = static_cast<int32_t>(rem);
  return out;
}

absl::StatusOr<NsPs> ParseMicros(std::string_view text) {
  return ParseTimeText(text, 1'000'000);
}

absl::StatusOr<int64_t> RelativePs(int64_t abs_ns, int32_t sub_ns_ps, int64_t origin_ns) {
  const __int128 rel = (static_cast<__int128>(abs_ns) - origin_ns) * 1000 + sub_ns_ps;
  constexpr __int128 kLimit = static_cast<__int128>(INT64_MAX) / 4;
  if (rel > kLimit || rel < -kLimit) {
    return absl::OutOfRangeError(absl::StrCat(
        "timestamp ", abs_ns, " ns is more than ~25 days away from the first one (", origin_ns,
        " ns); a table spans at most that"));
  }
  return static_cast<int64_t>(rel);
}

void AppendMicros(std::string* out, __int128 ps) {
  const bool negative = ps < 0;
  unsigned __int128 v = negative ? static_cast<unsigned __int128>(-ps)
                                 : static_cast<unsigned __int128>(ps);
  if (negative) out->push_back('-');
  uint64_t frac = static_cast<uint64_t>(v % 1'000'000);
  unsigned __int128 whole = v / 1'000'000;
  if (whole <= UINT64_MAX) {
    absl::StrAppend(out, static_cast<uint64_t>(whole));  // the common case, no 128-bit division
  } else {
    char digits[48];
    int pos = sizeof(digits);
    do {
      digits[--pos] = static_cast<char>('0' + static_cast<int>(whole % 10));
      whole /= 10;
    } while (whole > 0);
    out->append(digits + pos, sizeof(digits) - pos);
  }
  if (frac != 0) {
    char buf[7];
    buf[0] = '.';
    for (int k = 6; k >= 1; --k) {
      buf[k] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    int len = 7;
    while (buf[len - 1] == '0') --len;
    out->append(buf, len);
  }
}

std::string FormatMicros(__int128 ps) {
  std::string out;
  AppendMicros(&out, ps);
  return out;
}

}  // namespace tracetable
