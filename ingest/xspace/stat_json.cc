#include "ingest/xspace/stat_json.h"

#include <charconv>
#include <cmath>

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

}  // namespace

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
      AppendJsonString(out, stat.text);
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
