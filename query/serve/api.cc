#include "query/serve/api.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/time.h"
#include "format/json_text.h"
#include "query/estimate.h"
#include "query/search.h"
#include "query/input_fields.h"
#include "query/trace_json.h"
#include "query/track_filter.h"
#include "query/window.h"

namespace tracetable::serve {
namespace {

// Thrown by parameter parsing; turned into a 400 (or the given status) reply.
struct BadRequest {
  int status;
  std::string message;
  std::string parameter;
};

[[noreturn]] void Bad(std::string_view parameter, std::string message, int status = 400) {
  throw BadRequest{status, std::move(message), std::string(parameter)};
}

const std::string* Get(const Params& p, const std::string& key) {
  auto it = p.find(key);
  return it == p.end() ? nullptr : &it->second;
}

// Every value of a repeatable, comma-separable parameter.
std::vector<std::string> GetList(const Params& p, const std::string& key) {
  std::vector<std::string> out;
  auto [lo, hi] = p.equal_range(key);
  for (auto it = lo; it != hi; ++it) {
    size_t s = 0;
    const std::string& v = it->second;
    while (s <= v.size()) {
      size_t e = v.find(',', s);
      if (e == std::string::npos) e = v.size();
      if (e > s) out.push_back(v.substr(s, e - s));
      s = e + 1;
    }
  }
  return out;
}

std::string Quoted(std::string_view s) {
  std::string q;
  AppendJsonString(&q, s);
  return q;
}

// Absolute time text in `ps_per_unit` units -> relative ps of the table.
int64_t ParseTime(const Table& t, const std::string& text, std::string_view param,
                  int64_t ps_per_unit) {
  absl::StatusOr<NsPs> v = ParseTimeText(text, ps_per_unit);
  if (!v.ok()) Bad(param, absl::StrCat("bad time '", text.substr(0, 64), "': ", v.status().message()));
  const __int128 rel = (static_cast<__int128>(v->ns) - t.meta().origin_ns()) * 1000 + v->ps;
  const __int128 lim = static_cast<__int128>(INT64_MAX) / 4;
  if (rel > lim || rel < -lim) Bad(param, absl::StrCat("time ", text.substr(0, 64), " is far outside the trace"));
  return static_cast<int64_t>(rel);
}

int64_t TimeParam(const Table& t, const Params& p, const char* key, int64_t def,
                  int64_t ps_per_unit = 1'000'000) {
  const std::string* v = Get(p, key);
  if (!v || v->empty()) return def;
  return ParseTime(t, *v, key, ps_per_unit);
}

// A duration in microseconds -> ps (>= 0).
int64_t DurationParam(const Params& p, const char* key, int64_t def) {
  const std::string* v = Get(p, key);
  if (!v || v->empty()) return def;
  absl::StatusOr<NsPs> r = ParseMicros(*v);
  if (!r.ok() || r->ns < 0) Bad(key, absl::StrCat("bad duration '", v->substr(0, 64), "'"));
  if (r->ns > INT64_MAX / 4000) Bad(key, "duration is too large");
  return r->ns * 1000 + r->ps;
}

uint64_t UintParam(const Params& p, const char* key, uint64_t def, uint64_t max) {
  const std::string* v = Get(p, key);
  if (!v || v->empty()) return def;
  uint64_t n = 0;
  if (!absl::SimpleAtoi(Av(*v), &n)) Bad(key, absl::StrCat("not a non-negative integer: '", v->substr(0, 64), "'"));
  return std::min(n, max);
}

// Tracks chosen by tracks=, pid=P[:TID] and host= (all optional; the
// filters intersect). Never empty: no match is a 400.
std::vector<uint32_t> SelectTracks(const Table& t, const Params& p, bool* all) {
  TrackFilter filter{GetList(p, "tracks"), GetList(p, "pid"), GetList(p, "host")};
  *all = filter.empty();
  std::string bad;
  absl::StatusOr<std::vector<uint32_t>> tracks = tracetable::SelectTracks(t, filter, &bad);
  if (!tracks.ok()) Bad(bad, std::string(tracks.status().message()));
  if (tracks->empty()) Bad("tracks", "no track matches the filters");
  return *tracks;
}

struct Span {
  int64_t start, end;
};

Span SpanParams(const Table& t, const Params& p, const char* start_key, const char* end_key,
                int64_t ps_per_unit = 1'000'000) {
  Span s{TimeParam(t, p, start_key, t.meta().min_ts(), ps_per_unit),
         TimeParam(t, p, end_key, t.meta().max_end(), ps_per_unit)};
  if (s.end < s.start) Bad(end_key, absl::StrCat(end_key, " is before ", start_key));
  return s;
}

std::string Us(int64_t ps) { return FormatMicros(ps); }

void AppendTrackSummary(const Table& t, uint32_t id, std::string* out) {
  const proto::Track& tr = t.resources().tracks(id);
  const char* kind = tr.kind() == proto::Track::COUNTER ? "counter"
                     : tr.kind() == proto::Track::ASYNC ? "async" : "thread";
  absl::StrAppend(out, "{\"id\":", id, ",\"kind\":\"", kind, "\",\"tid\":");
  if (tr.kind() == proto::Track::COUNTER) {
    out->append("null");
  } else {
    AppendTid(t, id, out);
  }
  out->append(",\"name\":");
  AppendJsonString(out, tr.name());
  if (tr.kind() == proto::Track::COUNTER) {
    out->append(",\"series\":");
    AppendJsonString(out, tr.series());
  }
  if (tr.has_sort_index()) absl::StrAppend(out, ",\"sort_index\":", tr.sort_index());
  absl::StrAppend(out, ",\"max_depth\":", tr.max_depth(), ",\"events\":", tr.num_events(), "}");
}

std::vector<std::string> Hosts(const Table& t) {
  std::vector<std::string> hosts;
  for (const proto::Process& p : t.resources().processes()) {
    if (!p.host().empty() && std::find(hosts.begin(), hosts.end(), p.host()) == hosts.end()) {
      hosts.push_back(p.host());
    }
  }
  return hosts;
}

void AppendTableHeader(const NamedTable& nt, std::string* out) {
  const Table& t = *nt.table;
  out->append("\"name\":");
  AppendJsonString(out, nt.name);
  absl::StrAppend(out, ",\"start_us\":", AbsoluteMicros(t, t.meta().min_ts()),
                  ",\"end_us\":", AbsoluteMicros(t, t.meta().max_end()),
                  ",\"duration_us\":", Us(t.meta().max_end() - t.meta().min_ts()),
                  ",\"events\":", t.meta().num_events(), ",\"hosts\":[");
  bool first = true;
  for (const std::string& h : Hosts(t)) {
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(out, h);
  }
  absl::StrAppend(out, "],\"num_processes\":", t.resources().processes_size(),
                  ",\"num_tracks\":", t.resources().tracks_size(),
                  ",\"max_depth\":", t.meta().max_depth());
}

Reply Json(std::string body) {
  Reply r;
  r.body = std::move(body);
  return r;
}

template <typename F>
Reply Guard(F&& f) {
  try {
    return f();
  } catch (const BadRequest& b) {
    return ErrorReply(b.status, b.message, b.parameter);
  }
}

// ---- search ---------------------------------------------------------------

SearchResult RunSearch(const Table& t, std::vector<bool> names, std::vector<uint32_t> tracks,
                       Span span, const std::optional<SearchCursor>& cursor, uint64_t limit) {
  SearchRequest req;
  req.names = std::move(names);
  req.tracks = std::move(tracks);
  req.start = span.start;
  req.end = span.end;
  req.after = cursor;
  req.limit = limit;
  absl::StatusOr<SearchResult> r = Search(t, req);
  if (!r.ok()) Bad("", std::string(r.status().message()), 500);
  return *std::move(r);
}

// ---- stats ----------------------------------------------------------------

struct Agg {
  uint64_t count = 0;
  int64_t total = 0;
  int64_t self = 0;
  int64_t max = 0;
};

// ---- XProf ----------------------------------------------------------------

void AppendXprofEvent(const Table& t, const WindowItem& item, uint32_t z, bool with_args,
                      std::string* out) {
  const TileRow& r = item.row;
  const proto::Track& tr = t.resources().tracks(item.track);
  const bool counter = tr.kind() == proto::Track::COUNTER;
  const char* ph = "X";
  if (counter) {
    ph = "C";
  } else if (!item.summary) {
    switch (r.kind) {
      case EventKind::kInstant: ph = "i"; break;
      case EventKind::kFlowStart: ph = "s"; break;
      case EventKind::kFlowStep: ph = "t"; break;
      case EventKind::kFlowEnd: ph = "f"; break;
      default: break;
    }
  }
  absl::StrAppend(out, "{\"ph\":\"", ph, "\",\"pid\":");
  AppendPid(t, tr.process(), out);
  if (!counter) {
    out->append(",\"tid\":");
    AppendTid(t, item.track, out);
  }
  absl::StrAppend(out, ",\"ts\":", AbsoluteMicros(t, r.ts), ",\"z\":", z, ",\"name\":");
  if (counter) {
    AppendJsonString(out, tr.name());
    out->append(",\"args\":{");
    AppendJsonString(out, tr.series());
    out->push_back(':');
    AppendJsonDouble(out, r.value);
    absl::StrAppend(out, ",\"uid\":", r.id, "}}");
    return;
  }
  AppendJsonString(out, t.String(r.name));
  if (item.summary) {
    absl::StrAppend(out, ",\"cat\":\"tracetable.summary\",\"dur\":", Us(r.dur),
                    ",\"args\":{\"uid\":\"s", item.track, ".", r.ts, ".", r.lane, "\",\"count\":", r.count,
                    ",\"depth\":", r.lane, "}}");
    return;
  }
  out->append(",\"cat\":");
  AppendJsonString(out, t.String(r.cat));
  if (ph[0] == 'X') absl::StrAppend(out, ",\"dur\":", Us(r.dur));
  if (r.kind >= EventKind::kFlowStart && r.kind <= EventKind::kFlowEnd) {
    out->append(",\"id\":");
    AppendJsonString(out, t.String(r.flow_id));
    if (r.flags & kFlagBindEnclosing) out->append(",\"bp\":\"e\"");
  }
  if (r.kind == EventKind::kInstant) out->append(",\"s\":\"t\"");
  absl::StrAppend(out, ",\"args\":{\"uid\":", r.id);
  if (with_args && (r.flags & kFlagHasArgs)) {
    absl::StatusOr<std::string> args = t.Args(r.id);
    // Merge the event's own arguments after uid.
    if (args.ok() && args->size() > 2 && args->front() == '{') {
      out->push_back(',');
      out->append(args->substr(1, args->size() - 2));
    }
  }
  out->append("}}");
}

// Writes the answer object for `items`, with z = rank among equal (pid, ts).
std::string XprofAnswer(const Table& t, const std::vector<WindowItem>& items, bool with_args,
                        bool truncated) {
  std::string out = "{\"traceEvents\":[\n";
  std::vector<uint32_t> tracks;
  for (const WindowItem& it : items) {
    if (std::find(tracks.begin(), tracks.end(), it.track) == tracks.end()) tracks.push_back(it.track);
  }
  std::sort(tracks.begin(), tracks.end());
  AppendMetadataEvents(t, tracks, &out);
  absl::flat_hash_map<std::pair<uint32_t, int64_t>, uint32_t> z;
  for (const WindowItem& it : items) {
    const uint32_t process = t.resources().tracks(it.track).process();
    uint32_t& rank = z[{process, it.row.ts}];
    AppendXprofEvent(t, it, rank++, with_args, &out);
    out.append(",\n");
  }
  if (out.size() >= 2 && out.substr(out.size() - 2) == ",\n") out.resize(out.size() - 2);
  const double start_ms = static_cast<double>(t.meta().origin_ns()) / 1e6 +
                          static_cast<double>(t.meta().min_ts()) / 1e9;
  const double end_ms = static_cast<double>(t.meta().origin_ns()) / 1e6 +
                        static_cast<double>(t.meta().max_end()) / 1e9;
  out.append("\n],\"displayTimeUnit\":\"ns\",\"fullTimespan\":[");
  AppendJsonDouble(&out, start_ms);
  out.push_back(',');
  AppendJsonDouble(&out, end_ms);
  absl::StrAppend(&out, "],\"filteredByVisibility\":true,\"returnedEventsSize\":", items.size(),
                  ",\"truncated\":", truncated ? "true" : "false", "}\n");
  return out;
}

}  // namespace

Reply ErrorReply(int status, std::string_view message, std::string_view parameter) {
  Reply r;
  r.status = status;
  r.body = "{\"error\":";
  AppendJsonString(&r.body, message);
  if (!parameter.empty()) {
    r.body.append(",\"parameter\":");
    AppendJsonString(&r.body, parameter);
  }
  r.body.append("}\n");
  return r;
}

Reply TablesReply(const std::vector<NamedTable>& tables) {
  std::string out = "{\"tables\":[";
  for (size_t i = 0; i < tables.size(); ++i) {
    if (i) out.push_back(',');
    out.append("\n{");
    AppendTableHeader(tables[i], &out);
    out.push_back('}');
  }
  out.append("\n]}\n");
  return Json(std::move(out));
}

Reply TableReply(const NamedTable& nt) {
  const Table& t = *nt.table;
  std::string out = "{";
  AppendTableHeader(nt, &out);
  out.append(",\"inputs\":");
  AppendInputsJson(t, &out);
  out.append(",\"processes\":[");
  const proto::ResourceTable& res = t.resources();
  std::vector<std::vector<uint32_t>> by_process(res.processes_size());
  for (const proto::Track& tr : res.tracks()) by_process[tr.process()].push_back(tr.id());
  for (int i = 0; i < res.processes_size(); ++i) {
    const proto::Process& p = res.processes(i);
    if (i) out.push_back(',');
    absl::StrAppend(&out, "\n{\"id\":", i, ",\"pid\":");
    AppendPid(t, i, &out);
    out.append(",\"name\":");
    AppendJsonString(&out, p.name());
    out.append(",\"host\":");
    AppendJsonString(&out, p.host());
    if (p.has_sort_index()) absl::StrAppend(&out, ",\"sort_index\":", p.sort_index());
    out.append(",\"tracks\":[");
    for (size_t k = 0; k < by_process[i].size(); ++k) {
      if (k) out.push_back(',');
      AppendTrackSummary(t, by_process[i][k], &out);
    }
    out.append("]}");
  }
  out.append("\n]}\n");
  return Json(std::move(out));
}

Reply WindowReply(const Table& t, const Params& p) {
  return Guard([&] {
    WindowRequest req;
    const Span s = SpanParams(t, p, "start_us", "end_us");
    req.start = s.start;
    req.end = s.end;
    req.resolution = DurationParam(p, "resolution_us", (s.end - s.start) / 2000);
    req.limit = UintParam(p, "limit", kMaxWindowItems, kMaxWindowItems);
    if (req.limit == 0) req.limit = kMaxWindowItems;
    bool all = false;
    std::vector<uint32_t> tracks = SelectTracks(t, p, &all);
    if (!all) req.tracks = tracks;
    if (req.resolution > 0 &&
        static_cast<double>(s.end - s.start) / static_cast<double>(req.resolution) > kMaxBins) {
      Bad("resolution_us", absl::StrCat("too fine for the window: at most ", kMaxBins,
                                        " resolutions per window"));
    }
    if (req.resolution == 0 && EstimateEvents(t, tracks, s.start, s.end) > kMaxFullDetailEvents) {
      Bad("resolution_us", "resolution 0 over this window reads too many events; ask for a "
                           "smaller window or a resolution above 0");
    }
    absl::StatusOr<WindowResult> res = QueryWindow(t, req);
    // coarsen=1: an answer over the limit is asked again at a coarser
    // resolution instead of being cut in time, so the client sees all of the
    // window (a whole-trace view of 100M events is ~700k items at 2000 bins).
    // Items per lane fall about in proportion, so one retry usually fits.
    const bool coarsen = UintParam(p, "coarsen", 0, 1) == 1;
    for (int tries = 0; coarsen && res.ok() && res->truncated && req.resolution > 0 && tries < 4;
         ++tries) {
      const double factor = 1.25 * static_cast<double>(res->total_items) / static_cast<double>(req.limit);
      req.resolution = std::max<int64_t>(
          req.resolution + 1, static_cast<int64_t>(static_cast<double>(req.resolution) * factor));
      res = QueryWindow(t, req);
    }
    if (!res.ok()) return ErrorReply(500, Sv(res.status().message()));
    std::string out;
    out.reserve(res->items.size() * 160 + 4096);
    AppendWindowJson(t, req, *res, TraceJsonOptions(), &out);
    return Json(std::move(out));
  });
}

Reply EventReply(const Table& t, const Params& p) {
  return Guard([&] {
    const std::string* v = Get(p, "id");
    uint64_t id = 0;
    if (!v) Bad("id", "missing");
    if (!absl::SimpleAtoi(Av(*v), &id)) Bad("id", absl::StrCat("not an event id: '", v->substr(0, 64), "'"));
    absl::StatusOr<std::string> args = t.Args(id);
    if (!args.ok()) {
      if (absl::IsNotFound(args.status())) {
        return ErrorReply(404, absl::StrCat("no arguments stored for event ", id), "id");
      }
      return ErrorReply(500, Sv(args.status().message()));
    }
    return Json(absl::StrCat("{\"id\":", id, ",\"args\":", *args, "}\n"));
  });
}

Reply SearchReply(const Table& t, const Params& p) {
  return Guard([&] {
    const std::string* q = Get(p, "q");
    if (!q || q->empty()) Bad("q", "missing");
    if (q->size() > 256) Bad("q", "longer than 256 bytes");
    const Span s = SpanParams(t, p, "start_us", "end_us");
    const uint64_t limit = std::max<uint64_t>(1, UintParam(p, "limit", 100, kMaxSearchLimit));
    std::optional<SearchCursor> cursor;
    if (const std::string* c = Get(p, "cursor"); c && !c->empty()) {
      cursor = DecodeCursor(*c);
      if (!cursor) Bad("cursor", "not a cursor from a previous answer");
    }
    bool all = false;
    const std::vector<uint32_t> tracks = SelectTracks(t, p, &all);
    const std::vector<bool> names = NamesContaining(t, *q, false);
    SearchResult r = RunSearch(t, names, tracks, s, cursor, limit);
    const std::string next = r.more ? EncodeCursor(r.next) : std::string();
    std::string out = "{\"q\":";
    AppendJsonString(&out, *q);
    out.append(",\"matches\":[");
    for (size_t i = 0; i < r.matches.size(); ++i) {
      const WindowItem& m = r.matches[i];
      const proto::Track& tr = t.resources().tracks(m.track);
      if (i) out.push_back(',');
      absl::StrAppend(&out, "\n{\"id\":", m.row.id, ",\"track\":", m.track, ",\"pid\":");
      AppendPid(t, tr.process(), &out);
      out.append(",\"tid\":");
      AppendTid(t, m.track, &out);
      out.append(",\"name\":");
      AppendJsonString(&out, t.String(m.row.name));
      out.append(",\"cat\":");
      AppendJsonString(&out, t.String(m.row.cat));
      absl::StrAppend(&out, ",\"ts\":", AbsoluteMicros(t, m.row.ts), ",\"dur\":", Us(m.row.dur),
                      ",\"depth\":", m.row.lane, "}");
    }
    absl::StrAppend(&out, "\n],\"next_cursor\":", next.empty() ? "null" : Quoted(next),
                    ",\"scanned_to_us\":", AbsoluteMicros(t, r.scanned_to),
                    ",\"scanned_items\":", r.scanned, ",\"indexed\":", r.indexed ? "true" : "false", "}\n");
    return Json(std::move(out));
  });
}

Reply StatsReply(const Table& t, const Params& p) {
  return Guard([&] {
    const Span s = SpanParams(t, p, "start_us", "end_us");
    const uint64_t top = std::max<uint64_t>(1, UintParam(p, "top", 20, 1000));
    bool all = false;
    const std::vector<uint32_t> tracks = SelectTracks(t, p, &all);
    WindowRequest req;
    req.start = s.start;
    req.end = s.end;
    req.resolution = 0;
    if (!all) req.tracks = tracks;
    req.limit = kStatsEventCap;
    if (EstimateEvents(t, tracks, s.start, s.end) > 8 * kStatsEventCap) {
      // Reading the whole window would take long and the cap would cut it
      // anyway: read only its first part.
      const double est = EstimateEvents(t, tracks, s.start, s.end);
      req.end = s.start + static_cast<int64_t>(static_cast<double>(s.end - s.start) *
                                               (2.0 * kStatsEventCap / est));
    }
    absl::StatusOr<WindowResult> res = QueryWindow(t, req);
    if (!res.ok()) return ErrorReply(500, Sv(res.status().message()));
    const bool truncated = res->truncated || req.end < s.end;
    const std::vector<WindowItem>& items = res->items;
    // Self time: items are sorted by (track, ts, lane); a stack of open
    // slices gives each slice's parent (the nearest enclosing shallower one).
    std::vector<int64_t> self(items.size(), 0), clipped(items.size(), 0);
    struct Open {
      size_t index;
      int64_t end;
      uint32_t lane;
    };
    std::vector<Open> stack;
    uint32_t current_track = UINT32_MAX;
    int64_t covered_to = s.end;  // with truncation, where the data stops
    if (res->truncated && !items.empty()) {
      covered_to = s.start;
      for (const WindowItem& it : items) covered_to = std::max(covered_to, it.row.ts);
    } else if (req.end < s.end) {
      covered_to = req.end;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      const WindowItem& it = items[i];
      if (it.track != current_track) {
        stack.clear();
        current_track = it.track;
      }
      if (it.summary || it.row.kind != EventKind::kSlice) continue;
      const int64_t a = std::max(it.row.ts, s.start);
      const int64_t b = std::min(it.row.ts + it.row.dur, covered_to);
      clipped[i] = self[i] = std::max<int64_t>(0, b - a);
      while (!stack.empty() &&
             (stack.back().end <= it.row.ts || stack.back().lane >= it.row.lane)) {
        stack.pop_back();
      }
      if (!stack.empty()) {
        const size_t pi = stack.back().index;
        const int64_t pa = std::max(items[pi].row.ts, s.start);
        const int64_t pb = std::min(items[pi].row.ts + items[pi].row.dur, covered_to);
        const int64_t ov = std::min(b, pb) - std::max(a, pa);
        if (ov > 0) self[pi] -= ov;
      }
      stack.push_back({i, it.row.ts + it.row.dur, it.row.lane});
    }
    absl::flat_hash_map<uint32_t, Agg> by_track;
    absl::flat_hash_map<uint32_t, Agg> by_name;
    for (size_t i = 0; i < items.size(); ++i) {
      const WindowItem& it = items[i];
      Agg& ta = by_track[it.track];
      ta.count += it.row.count;
      const bool counter = t.resources().tracks(it.track).kind() == proto::Track::COUNTER;
      if (counter) continue;
      Agg& na = by_name[it.row.name];
      na.count += it.row.count;
      ta.total += clipped[i];
      ta.self += std::max<int64_t>(0, self[i]);
      na.total += clipped[i];
      na.self += std::max<int64_t>(0, self[i]);
      na.max = std::max(na.max, clipped[i]);
    }
    std::vector<std::pair<uint32_t, Agg>> tv(by_track.begin(), by_track.end());
    std::sort(tv.begin(), tv.end(), [](const auto& x, const auto& y) {
      return x.second.total != y.second.total ? x.second.total > y.second.total : x.first < y.first;
    });
    std::vector<std::pair<uint32_t, Agg>> nv(by_name.begin(), by_name.end());
    std::sort(nv.begin(), nv.end(), [](const auto& x, const auto& y) {
      return x.second.self != y.second.self ? x.second.self > y.second.self : x.first < y.first;
    });
    std::string out;
    absl::StrAppend(&out, "{\"start_us\":", AbsoluteMicros(t, s.start), ",\"end_us\":",
                    AbsoluteMicros(t, s.end), ",\"covered_to_us\":", AbsoluteMicros(t, covered_to),
                    ",\"events\":", items.size(), ",\"truncated\":", truncated ? "true" : "false",
                    ",\"num_tracks\":", tv.size(), ",\"num_names\":", nv.size(), ",\"tracks\":[");
    for (size_t i = 0; i < tv.size() && i < top; ++i) {
      const proto::Track& tr = t.resources().tracks(tv[i].first);
      if (i) out.push_back(',');
      absl::StrAppend(&out, "\n{\"track\":", tv[i].first, ",\"pid\":");
      AppendPid(t, tr.process(), &out);
      out.append(",\"name\":");
      AppendJsonString(&out, tr.name());
      absl::StrAppend(&out, ",\"count\":", tv[i].second.count, ",\"total_us\":", Us(tv[i].second.total),
                      ",\"self_us\":", Us(tv[i].second.self), "}");
    }
    out.append("\n],\"names\":[");
    for (size_t i = 0; i < nv.size() && i < top; ++i) {
      if (i) out.push_back(',');
      out.append("\n{\"name\":");
      AppendJsonString(&out, t.String(nv[i].first));
      absl::StrAppend(&out, ",\"count\":", nv[i].second.count, ",\"total_us\":", Us(nv[i].second.total),
                      ",\"self_us\":", Us(nv[i].second.self), ",\"max_us\":", Us(nv[i].second.max), "}");
    }
    out.append("\n]}\n");
    return Json(std::move(out));
  });
}

Reply XprofReply(const std::vector<NamedTable>& tables, const Params& p) {
  return Guard([&]() -> Reply {
    const std::string* run = Get(p, "run");
    const NamedTable* nt = nullptr;
    if (run && !run->empty()) {
      for (const NamedTable& x : tables) {
        if (x.name == *run) nt = &x;
      }
      if (!nt) return ErrorReply(404, absl::StrCat("no table named '", run->substr(0, 64), "'"), "run");
    } else if (tables.size() == 1) {
      nt = &tables[0];
    } else {
      Bad("run", "missing (the server holds several tables)");
    }
    const Table& t = *nt->table;
    const std::string* tag = Get(p, "tag");
    if (tag && !tag->empty() && *tag != "trace_viewer@" && *tag != "trace_viewer") {
      Bad("tag", "only trace_viewer@ is served");
    }
    Params filtered;
    if (const std::string* h = Get(p, "host"); h && !h->empty()) filtered.emplace("host", *h);
    bool all = false;
    const std::vector<uint32_t> tracks = SelectTracks(t, filtered, &all);
    const Span s = SpanParams(t, p, "start_time_ms", "end_time_ms", 1'000'000'000);

    // Event details.
    if (const std::string* uid = Get(p, "unique_id"); uid && !uid->empty()) {
      uint64_t id = 0;
      if (!absl::SimpleAtoi(Av(*uid), &id)) Bad("unique_id", "not an event id");
      // Event ids are in read order, not per track: look in the given time
      // (every selected track), or the whole span if it is small enough.
      WindowRequest req;
      if (!all) req.tracks = tracks;
      const std::string* st = Get(p, "start_time_ms");
      req.start = TimeParam(t, p, "start_time_ms", t.meta().min_ts(), 1'000'000'000);
      // ms doubles are not exact: look a microsecond around the given start.
      req.end = st ? req.start + 1'000'000 : t.meta().max_end();
      req.start -= 1'000'000;
      if (!st && EstimateEvents(t, tracks, req.start, req.end) > kMaxFullDetailEvents) {
        Bad("start_time_ms", "needed to find an event in a table this large");
      }
      req.resolution = 0;
      req.limit = 1'000'000;
      absl::StatusOr<WindowResult> res = QueryWindow(t, req);
      if (!res.ok()) return ErrorReply(500, Sv(res.status().message()));
      for (const WindowItem& it : res->items) {
        if (it.row.id == id && !it.summary) {
          if (const std::string* n = Get(p, "event_name");
              n && !n->empty() && *n != t.String(it.row.name)) {
            continue;
          }
          return Json(XprofAnswer(t, {it}, true, false));
        }
      }
      return ErrorReply(404, absl::StrCat("no event ", id, " at the given time"), "unique_id");
    }

    // Search by name prefix.
    if (const std::string* prefix = Get(p, "search_prefix"); prefix && !prefix->empty()) {
      if (prefix->size() > 256) Bad("search_prefix", "longer than 256 bytes");
      const std::vector<bool> names = NamesContaining(t, *prefix, true);
      const uint64_t limit = std::max<uint64_t>(1, UintParam(p, "limit", kMaxSearchLimit, kMaxSearchLimit));
      SearchResult r = RunSearch(t, names, tracks, s, std::nullopt, limit);
      std::sort(r.matches.begin(), r.matches.end(), [](const WindowItem& a, const WindowItem& b) {
        return a.track != b.track ? a.track < b.track : a.row.ts < b.row.ts;
      });
      return Json(XprofAnswer(t, r.matches, false, r.more));
    }

    // A window: `resolution` bins across the requested span.
    const uint64_t bins = UintParam(p, "resolution", 8000, kMaxBins);
    WindowRequest req;
    req.start = s.start;
    req.end = s.end;
    req.resolution = bins == 0 ? 0 : (s.end - s.start) / static_cast<int64_t>(bins);
    if (!all) req.tracks = tracks;
    req.limit = kMaxWindowItems;
    if (req.resolution == 0 && EstimateEvents(t, tracks, s.start, s.end) > kMaxFullDetailEvents) {
      Bad("resolution", "resolution 0 over this span reads too many events");
    }
    absl::StatusOr<WindowResult> res = QueryWindow(t, req);
    if (!res.ok()) return ErrorReply(500, Sv(res.status().message()));
    return Json(XprofAnswer(t, res->items, false, res->truncated));
  });
}

}  // namespace tracetable::serve
