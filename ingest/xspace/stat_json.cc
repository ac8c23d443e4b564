#include "ingest/xspace/stat_json.h"

#include <charconv>
#include <cmath>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tracetable::xspace_json {
namespace {

using tracetable::xspace::XStat;

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len]) return 0;             // overlong encoding
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;        // UTF-16 surrogate
  if (cp > 0x10FFFF) return 0;
  return len;
}

void AppendDecimal(std::string* out, auto v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void AppendString(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run that needs no escaping in one append.
    size_t run = i;
    while (run < s.size()) {
      const unsigned char c = s[run];
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++run;
    }
    out->append(s.data() + i, run - i);
    i = run;
    if (i == s.size()) break;
    const unsigned char c = s[i];
    if (c >= 0x80) {
      const size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD keeps the JSON parseable
        ++i;
      } else {
        out->append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xF]);
    }
    ++i;
  }
  out->push_back('"');
}

void AppendDouble(std::string* out, double v) {
  if (std::isnan(v)) {
    out->append("\"NaN\"");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    // std::to_chars without a precision is the shortest round-trip form.
    AppendDecimal(out, v);
  }
}

void AppendStatValue(std::string* out, const XStat& stat,
                     const StatMetadataMap& stat_metadata) {
  switch (stat.value_case()) {
    case XStat::kDoubleValue:
      AppendDouble(out, stat.double_value());
      return;
    case XStat::kUint64Value:
      AppendDecimal(out, stat.uint64_value());
      return;
    case XStat::kInt64Value:
      AppendDecimal(out, stat.int64_value());
      return;
    case XStat::kStrValue:
      AppendString(out, stat.str_value());
      return;
    case XStat::kBytesValue: {
      const std::string& b = stat.bytes_value();
      if (b.size() <= kMaxBase64Bytes) {
        AppendString(out, absl::StrCat("base64:", absl::Base64Escape(b)));
      } else {
        AppendString(out, absl::StrCat("<", b.size(), " bytes>"));
      }
      return;
    }
    case XStat::kRefValue:
      AppendString(out, StatText(stat, stat_metadata));
      return;
    case XStat::VALUE_NOT_SET:
      out->append("null");
      return;
  }
  out->append("null");
}

std::string StatText(const XStat& stat, const StatMetadataMap& stat_metadata) {
  switch (stat.value_case()) {
    case XStat::kDoubleValue: {
      std::string s;
      AppendDouble(&s, stat.double_value());
      return s;
    }
    case XStat::kUint64Value:
      return absl::StrCat(stat.uint64_value());
    case XStat::kInt64Value:
      return absl::StrCat(stat.int64_value());
    case XStat::kStrValue:
      return stat.str_value();
    case XStat::kBytesValue:
      return stat.bytes_value();
    case XStat::kRefValue: {
      // ref ids are uint64 on the wire but map keys are int64.
      auto it = stat_metadata.find(static_cast<int64_t>(stat.ref_value()));
      if (it != stat_metadata.end()) return it->second.name();
      return absl::StrCat("<ref ", stat.ref_value(), ">");
    }
    case XStat::VALUE_NOT_SET:
      return "";
  }
  return "";
}

bool StatNumber(const XStat& stat, double* value) {
  switch (stat.value_case()) {
    case XStat::kDoubleValue:
      *value = stat.double_value();
      return true;
    case XStat::kUint64Value:
      *value = static_cast<double>(stat.uint64_value());
      return true;
    case XStat::kInt64Value:
      *value = static_cast<double>(stat.int64_value());
      return true;
    default:
      return false;
  }
}

}  // namespace tracetable::xspace_json
