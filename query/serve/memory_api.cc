#include "query/serve/memory_api.h"

#include <algorithm>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/time.h"
#include "query/memory.h"
#include "query/memory_json.h"

namespace tracetable::serve {

namespace {

constexpr uint64_t kMaxTimelineBins = 100'000;

std::string Param(const Params& p, const char* key) {
  auto it = p.find(key);
  return it == p.end() ? std::string() : it->second;
}

// Absolute microseconds -> relative ps; nullopt (and *error set) if bad.
std::optional<int64_t> Time(const Table& t, const std::string& text, std::string* error) {
  absl::StatusOr<NsPs> v = ParseMicros(text);
  if (!v.ok()) {
    *error = absl::StrCat("bad time '", text.substr(0, 64), "'");
    return std::nullopt;
  }
  const __int128 rel = (static_cast<__int128>(v->ns) - t.meta().origin_ns()) * 1000 + v->ps;
  const __int128 lim = static_cast<__int128>(INT64_MAX) / 4;
  if (rel > lim || rel < -lim) {
    *error = "time is far outside the trace";
    return std::nullopt;
  }
  return static_cast<int64_t>(rel);
}

Reply Fail(const absl::Status& s) {
  return ErrorReply(absl::IsNotFound(s) ? 404 : absl::IsInvalidArgument(s) ? 400 : 500, Sv(s.message()));
}

}  // namespace

Reply MemoryReply(const Table& t, const Params& p) {
  std::string error;
  std::optional<int64_t> at;
  const std::string at_text = Param(p, "at_us");
  const std::string peak = Param(p, "peak");
  if (!at_text.empty()) {
    if (!peak.empty() && peak != "0") return ErrorReply(400, "give at_us or peak, not both", "at_us");
    at = Time(t, at_text, &error);
    if (!at) return ErrorReply(400, error, "at_us");
  }
  uint64_t limit = 100;
  if (const std::string l = Param(p, "limit"); !l.empty() && !absl::SimpleAtoi(Av(l), &limit)) {
    return ErrorReply(400, "not a non-negative integer", "limit");
  }
  int64_t start = t.meta().min_ts(), end = t.meta().max_end();
  for (auto [key, out] : {std::pair{"start_us", &start}, {"end_us", &end}}) {
    const std::string v = Param(p, key);
    if (v.empty()) continue;
    std::optional<int64_t> x = Time(t, v, &error);
    if (!x) return ErrorReply(400, error, key);
    *out = *x;
  }
  if (end < start) return ErrorReply(400, "end_us is before start_us", "end_us");
  int64_t resolution = std::max<int64_t>((end - start) / 2000, 1);
  if (const std::string r = Param(p, "resolution_us"); !r.empty()) {
    absl::StatusOr<NsPs> v = ParseMicros(r);
    if (!v.ok() || v->ns < 0 || v->ns > INT64_MAX / 4000) return ErrorReply(400, "bad duration", "resolution_us");
    resolution = v->ns * 1000 + v->ps;
  }
  if (resolution < 0 || (resolution > 0 && static_cast<uint64_t>((end - start) / resolution) > kMaxTimelineBins)) {
    return ErrorReply(400, absl::StrCat("at most ", kMaxTimelineBins, " timeline bins (or resolution_us=0: every sample)"),
                      "resolution_us");
  }
  absl::StatusOr<std::vector<uint32_t>> ids = SelectMemoryIds(t, Param(p, "id"), Param(p, "host"));
  if (!ids.ok()) return Fail(ids.status());
  std::string out = "{\"ids\":[";
  for (size_t k = 0; k < ids->size(); ++k) {
    if (k) out.push_back(',');
    AppendMemoryIdJson(t, (*ids)[k], &out);
  }
  out.append("],\"breakdowns\":[");
  bool first = true;
  // The viewer's chart follows every zoom and pan: it asks for timelines only.
  const bool breakdowns = Param(p, "breakdown") != "0";
  for (uint32_t i : *ids) {
    if (!breakdowns || t.meta().memory().ids(static_cast<int>(i)).events() == 0) continue;
    absl::StatusOr<MemoryBreakdown> b = at ? MemoryBreakdownAt(t, i, *at) : MemoryBreakdownAtPeak(t, i);
    if (!b.ok()) return Fail(b.status());
    if (!first) out.push_back(',');
    first = false;
    AppendMemoryBreakdownJson(t, *b, limit, &out);
  }
  out.append("],\"timelines\":[");
  if (Param(p, "timeline") != "0") {
    for (size_t k = 0; k < ids->size(); ++k) {
      absl::StatusOr<std::vector<MemorySeries>> s = MemoryTimeline(t, (*ids)[k], start, end, resolution);
      if (!s.ok()) return Fail(s.status());
      if (k) out.push_back(',');
      AppendMemoryTimelineJson(t, (*ids)[k], *s, &out);
    }
  }
  out.append("]}\n");
  Reply r;
  r.body = std::move(out);
  return r;
}

}  // namespace tracetable::serve
