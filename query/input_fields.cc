#include "query/input_fields.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/json_text.h"

namespace tracetable {
namespace {

// Sorted, so answers do not depend on protobuf map order.
std::map<std::string, std::string> SortedFields(const proto::InputInfo& in) {
  return {in.fields().begin(), in.fields().end()};
}

void AppendFieldsObject(const std::map<std::string, std::string>& fields, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (const auto& [k, v] : fields) {
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(out, k);
    out->push_back(':');
    out->append(v);
  }
  out->push_back('}');
}

}  // namespace

void AppendInputsJson(const Table& t, std::string* out) {
  out->push_back('[');
  for (int i = 0; i < t.meta().inputs_size(); ++i) {
    const proto::InputInfo& in = t.meta().inputs(i);
    if (i) out->push_back(',');
    out->append("{\"path\":");
    AppendJsonString(out, in.path());
    out->append(",\"host\":");
    AppendJsonString(out, in.host());
    absl::StrAppend(out, ",\"bytes\":", in.bytes(), ",\"events\":", in.events(), ",\"fields\":");
    AppendFieldsObject(SortedFields(in), out);
    out->push_back('}');
  }
  out->push_back(']');
}

void AppendTopLevelFields(const Table& t, std::string* out) {
  std::map<std::string, std::vector<const std::string*>> values;
  for (const proto::InputInfo& in : t.meta().inputs()) {
    for (const auto& [k, v] : in.fields()) {
      if (k == "traceEvents" || k == "displayTimeUnit" || k == "tracetableInputFields") continue;
      values[k].push_back(&v);
    }
  }
  bool disagree = false;
  for (const auto& [k, vs] : values) {
    for (const std::string* v : vs) disagree = disagree || *v != *vs[0];
    AppendJsonString(out, k);
    absl::StrAppend(out, ":", *vs[0], ",");
  }
  if (!disagree) return;
  out->append("\"tracetableInputFields\":{");
  bool first = true;
  for (const proto::InputInfo& in : t.meta().inputs()) {
    if (in.fields().empty()) continue;
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(out, in.path());
    out->push_back(':');
    AppendFieldsObject(SortedFields(in), out);
  }
  out->append("},");
}

}  // namespace tracetable
