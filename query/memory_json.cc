#include "query/memory_json.h"

#include "absl/strings/str_cat.h"
#include "format/json_text.h"
#include "query/trace_json.h"

namespace tracetable {

namespace {

void AppendIdentity(const proto::MemoryId& m, uint32_t id, std::string* out) {
  absl::StrAppend(out, "\"index\":", id, ",\"id\":");
  AppendJsonString(out, m.name());
  out->append(",\"host\":");
  AppendJsonString(out, m.host());
}

void AppendUs(const Table& t, const char* key, int64_t ps, std::string* out) {
  absl::StrAppend(out, ",\"", key, "\":");
  AppendAbsoluteMicros(t, ps, out);
}

}  // namespace

void AppendMemoryIdJson(const Table& t, uint32_t id, std::string* out) {
  const proto::MemoryId& m = t.meta().memory().ids(static_cast<int>(id));
  out->push_back('{');
  AppendIdentity(m, id, out);
  out->append(",\"source\":");
  AppendJsonString(out, m.source());
  absl::StrAppend(out, ",\"events\":", m.events(), ",\"allocations\":", m.allocations(),
                  ",\"deallocations\":", m.deallocations(), ",\"unpaired\":{\"frees_without_alloc\":",
                  m.frees_without_alloc(), ",\"allocs_never_freed\":", m.allocs_never_freed(),
                  ",\"allocs_at_live_addr\":", m.allocs_at_live_addr(), ",\"events_without_addr\":",
                  m.events_without_addr(), "}");
  if (m.events() > 0) {
    AppendUs(t, "first_us", m.first_ts(), out);
    AppendUs(t, "last_us", m.last_ts(), out);
    absl::StrAppend(out, ",\"peak\":{\"in_use\":", m.peak_in_use());
    AppendUs(t, "ts_us", m.peak_ts(), out);
    if (m.has_peak_step()) absl::StrAppend(out, ",\"step\":", m.peak_step());
    out->push_back('}');
    if (m.reserved_track() != 0) {
      absl::StrAppend(out, ",\"peak_reserved\":{\"bytes\":", m.peak_reserved());
      AppendUs(t, "ts_us", m.peak_reserved_ts(), out);
      out->push_back('}');
    }
  }
  out->append(",\"series\":[");
  bool first = true;
  for (uint32_t tr : {m.in_use_track(), m.reserved_track(), m.available_track(), m.fragmentation_track()}) {
    if (tr == 0 || tr - 1 >= static_cast<uint32_t>(t.resources().tracks_size())) continue;
    if (!first) out->push_back(',');
    first = false;
    absl::StrAppend(out, "{\"name\":");
    AppendJsonString(out, t.resources().tracks(static_cast<int>(tr - 1)).series());
    absl::StrAppend(out, ",\"track\":", tr - 1, "}");
  }
  out->append("]}");
}

void AppendMemoryBreakdownJson(const Table& t, const MemoryBreakdown& b, uint64_t limit, std::string* out) {
  const proto::MemoryId& m = t.meta().memory().ids(static_cast<int>(b.id));
  out->push_back('{');
  AppendIdentity(m, b.id, out);
  absl::StrAppend(out, ",\"at\":\"", b.at_peak ? "peak" : "time", "\"");
  AppendUs(t, "ts_us", b.ts, out);
  if (b.before_first_event) out->append(",\"before_first_event\":true");
  const uint64_t n = limit == 0 ? b.live.size() : std::min<uint64_t>(limit, b.live.size());
  absl::StrAppend(out, ",\"in_use\":", b.in_use, ",\"live_count\":", b.live.size(), ",\"live_bytes\":",
                  b.live_bytes, ",\"unattributed\":", b.unattributed, ",\"rows_total\":", b.live.size(),
                  ",\"truncated\":", n < b.live.size() ? "true" : "false", ",\"rows\":[");
  for (uint64_t i = 0; i < n; ++i) {
    const LiveAllocation& a = b.live[i];
    if (i) out->push_back(',');
    absl::StrAppend(out, "{\"bytes\":", a.bytes, ",\"requested\":", a.requested, ",\"op\":");
    AppendJsonString(out, a.op);
    out->append(",\"shape\":");
    AppendJsonString(out, a.shape);
    out->append(",\"data_type\":");
    AppendJsonString(out, a.data_type);
    out->append(",\"region\":");
    AppendJsonString(out, a.region);
    absl::StrAppend(out, ",\"addr\":\"0x", absl::Hex(a.addr), "\"");
    AppendUs(t, "alloc_us", a.alloc_ts, out);
    if (a.has_step) absl::StrAppend(out, ",\"step\":", a.step);
    absl::StrAppend(out, ",\"event_id\":", a.event_id, "}");
  }
  out->append("]}");
}

void AppendMemoryTimelineJson(const Table& t, uint32_t id, const std::vector<MemorySeries>& series,
                              std::string* out) {
  const proto::MemoryId& m = t.meta().memory().ids(static_cast<int>(id));
  out->push_back('{');
  AppendIdentity(m, id, out);
  out->append(",\"series\":[");
  for (size_t k = 0; k < series.size(); ++k) {
    if (k) out->push_back(',');
    out->append("{\"name\":");
    AppendJsonString(out, series[k].name);
    out->append(",\"samples\":[");
    for (size_t i = 0; i < series[k].samples.size(); ++i) {
      if (i) out->push_back(',');
      out->push_back('[');
      AppendAbsoluteMicros(t, series[k].samples[i].first, out);
      out->push_back(',');
      AppendJsonDouble(out, series[k].samples[i].second);
      out->push_back(']');
    }
    out->append("]}");
  }
  out->append("]}");
}

}  // namespace tracetable
