#include "ingest/xspace/stat_json.h"

#include <charconv>
#include <cmath>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "format/json_text.h"

namespace tracetable::xspace_json {
namespace {

using tracetable::xspace::XStat;

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
      AppendJsonString(out, stat.str_value());
      return;
    case XStat::kBytesValue: {
      const std::string& b = stat.bytes_value();
      if (b.size() <= kMaxBase64Bytes) {
        AppendJsonString(out, absl::StrCat("base64:", absl::Base64Escape(b)));
      } else {
        AppendJsonString(out, absl::StrCat("<", b.size(), " bytes>"));
      }
      return;
    }
    case XStat::kRefValue:
      AppendJsonString(out, StatText(stat, stat_metadata));
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
