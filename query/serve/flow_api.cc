#include "query/serve/flow_api.h"

#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/json_text.h"
#include "format/time.h"
#include "query/flow_ends.h"
#include "query/trace_json.h"

namespace tracetable::serve {
namespace {

const std::string* Param(const Params& p, const char* key) {
  auto it = p.find(key);
  return it == p.end() || it->second.empty() ? nullptr : &it->second;
}

Reply Json(std::string body) {
  Reply r;
  r.body = std::move(body);
  return r;
}

const char* Phase(EventKind k) {
  return k == EventKind::kFlowStart ? "s" : k == EventKind::kFlowStep ? "t" : "f";
}

void AppendEnd(const Table& t, const FlowEnd& e, std::string* out) {
  const TileRow& s = e.slice;
  absl::StrAppend(out, "{\"id\":", s.id, ",\"track\":", e.track, ",\"pid\":");
  AppendPid(t, t.resources().tracks(e.track).process(), out);
  out->append(",\"tid\":");
  AppendTid(t, e.track, out);
  out->append(",\"name\":");
  AppendJsonString(out, t.String(s.name));
  out->append(",\"cat\":");
  AppendJsonString(out, t.String(s.cat));
  absl::StrAppend(out, ",\"ts\":", AbsoluteMicros(t, s.ts), ",\"dur\":", FormatMicros(s.dur),
                  ",\"depth\":", s.lane, ",\"flags\":", s.flags, ",\"at\":", AbsoluteMicros(t, e.at),
                  // Picoseconds from the table's start, as tiles count them.
                  ",\"ts_ps\":", s.ts - t.meta().min_ts(), ",\"at_ps\":", e.at - t.meta().min_ts(),
                  ",\"dir\":\"", e.in && e.out ? "step" : e.out ? "out" : "in", "\"");
  if (e.via_event) {
    absl::StrAppend(out, ",\"via\":\"event\",\"phase\":\"", Phase(e.phase), "\",\"flow_event\":", e.flow_event_id);
  } else {
    out->append(",\"via\":\"bind\"");
  }
  out->push_back('}');
}

}  // namespace

Reply FlowReply(const Table& t, const Params& p) {
  const std::string* text = Param(p, "id");
  const std::string* sid_text = Param(p, "sid");
  if (!text == !sid_text) return ErrorReply(400, "give id (the flow id) or sid (its id in tile answers)", "id");
  std::optional<uint32_t> sid;
  if (sid_text) {
    uint32_t v = 0;
    if (!absl::SimpleAtoi(Av(*sid_text), &v) || v == 0 || (!IsNumericFlowId(v) && v >= t.num_strings())) {
      return ErrorReply(400, absl::StrCat("not a flow id of this table: '", sid_text->substr(0, 64), "'"), "sid");
    }
    sid = v;
  } else {
    sid = FindFlowId(t, *text);
  }
  std::string out = "{\"flow\":";
  AppendJsonString(&out, sid ? t.FlowIdText(*sid) : *text);
  out.append(",\"sid\":");
  if (!sid) return Json(out + "null,\"ends\":[]}\n");
  ReadStats stats;
  absl::StatusOr<std::vector<FlowEnd>> ends = FindFlowEnds(t, *sid, &stats);
  if (!ends.ok()) {
    return ErrorReply(absl::IsFailedPrecondition(ends.status()) ? 409 : 500, Sv(ends.status().message()));
  }
  absl::StrAppend(&out, *sid, ",\"ends\":[");
  for (size_t i = 0; i < ends->size(); ++i) {
    if (i) out.push_back(',');
    out.push_back('\n');
    AppendEnd(t, (*ends)[i], &out);
  }
  absl::StrAppend(&out, "\n],\"tiles_read\":", stats.tiles, "}\n");
  return Json(std::move(out));
}

}  // namespace tracetable::serve
