#include "ingest/xspace/stat_json.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/json_text.h"

namespace tracetable::xspace_json {
namespace {

using xspace_wire::StatKind;

void AppendDecimal(std::string* out, auto v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

// Whether any of the 8 bytes in `w` is below 0x20, '"' or '\\' (exact as a
// yes/no: the carries of the SWAR subtraction can only mark bytes after a
// true hit).
bool HasJsonSpecial(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101;
  constexpr uint64_t kHigh = 0x8080808080808080;
  const auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  const uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
  return (below_space | has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\'))) != 0;
}

bool NeedsEscape(std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (HasJsonSpecial(w)) return true;
  }
  for (; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c < 0x20 || c == '"' || c == '\\') return true;
  }
  return false;
}

}  // namespace

void AppendUtf8JsonString(std::string* out, std::string_view utf8) {
  // Valid UTF-8 with nothing to escape is copied byte for byte.
  if (NeedsEscape(utf8)) {
    AppendJsonString(out, utf8);
    return;
  }
  out->push_back('"');
  out->append(utf8);
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

void AppendStatValue(std::string* out, const StatView& stat,
                     const StatMetadataMap& stat_metadata) {
  switch (stat.kind) {
    case StatKind::kDouble:
      AppendDouble(out, stat.double_value());
      return;
    case StatKind::kUint64:
      AppendDecimal(out, stat.uint64_value());
      return;
    case StatKind::kInt64:
      AppendDecimal(out, stat.int64_value());
      return;
    case StatKind::kStr:
      AppendUtf8JsonString(out, stat.text);
      return;
    case StatKind::kBytes: {
      const std::string_view b = stat.text;
      if (b.size() <= kMaxBase64Bytes) {
        AppendJsonString(out, absl::StrCat("base64:", absl::Base64Escape(Av(b))));
      } else {
        AppendJsonString(out, absl::StrCat("<", b.size(), " bytes>"));
      }
      return;
    }
    case StatKind::kRef:
      AppendJsonString(out, StatText(stat, stat_metadata));
      return;
    case StatKind::kNone:
      out->append("null");
      return;
  }
  out->append("null");
}

std::string StatText(const StatView& stat, const StatMetadataMap& stat_metadata) {
  switch (stat.kind) {
    case StatKind::kDouble: {
      std::string s;
      AppendDouble(&s, stat.double_value());
      return s;
    }
    case StatKind::kUint64:
      return absl::StrCat(stat.uint64_value());
    case StatKind::kInt64:
      return absl::StrCat(stat.int64_value());
    case StatKind::kStr:
    case StatKind::kBytes:
      return std::string(stat.text);
    case StatKind::kRef: {
      // ref ids are uint64 on the wire but map keys are int64.
      auto it = stat_metadata.find(static_cast<int64_t>(stat.uint64_value()));
      if (it != stat_metadata.end()) return std::string(it->second.name);
      return absl::StrCat("<ref ", stat.uint64_value(), ">");
    }
    case StatKind::kNone:
      return "";
  }
  return "";
}

bool StatNumber(const StatView& stat, double* value) {
  switch (stat.kind) {
    case StatKind::kDouble:
      *value = stat.double_value();
      return true;
    case StatKind::kUint64:
      *value = static_cast<double>(stat.uint64_value());
      return true;
    case StatKind::kInt64:
      *value = static_cast<double>(stat.int64_value());
      return true;
    default:
      return false;
  }
}

}  // namespace tracetable::xspace_json
