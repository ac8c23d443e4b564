#include "query/serve/api.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <limits>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/time.h"
#include "format/json_text.h"
#include "query/estimate.h"
#include "query/range_stats.h"
#include "query/search.h"
#include "query/input_fields.h"
#include "query/search_count.h"
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

// Whether the digits before any exponent are not all zero ("1e-300" is not
// zero even though it parses to 0 ps).
bool MantissaNonZero(std::string_view text) {
  for (char c : text) {
    if (c == 'e' || c == 'E') break;
    if (c >= '1' && c <= '9') return true;
  }
  return false;
}

// A duration in microseconds -> ps (>= 0). A non-zero value finer than the
// picosecond is refused rather than rounded to 0 (which means "every
// event", the most expensive answer, and would slip past the bins cap).
int64_t DurationParam(const Params& p, const char* key, int64_t def) {
  const std::string* v = Get(p, key);
  if (!v || v->empty()) return def;
  absl::StatusOr<NsPs> r = ParseMicros(*v);
  if (!r.ok() || r->ns < 0) Bad(key, absl::StrCat("bad duration '", v->substr(0, 64), "'"));
  if (r->ns > INT64_MAX / 4000) Bad(key, "duration is too large");
  const int64_t ps = r->ns * 1000 + r->ps;
  if (ps == 0 && MantissaNonZero(*v)) {
    Bad(key, absl::StrCat("'", v->substr(0, 64), "' is not 0 but finer than a picosecond"));
  }
  return ps;
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
  absl::StrAppend(out, "{\"id\":", id, ",\"kind\":\"", TrackKindName(tr), "\",\"tid\":");
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
  absl::flat_hash_set<std::string> seen;  // a linear search is quadratic in hosts
  for (const proto::Process& p : t.resources().processes()) {
    if (!p.host().empty() && seen.insert(p.host()).second) {
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
    AppendJsonString(out, t.FlowIdText(r.flow_id));
    if (r.flags & kFlagBindEnclosing) out->append(",\"bp\":\"e\"");
  }
  if (r.kind == EventKind::kInstant) out->append(",\"s\":\"t\"");
  absl::StrAppend(out, ",\"args\":{\"uid\":", r.id);
  if (with_args && (r.flags & kFlagHasArgs)) {
    absl::StatusOr<std::string> args = t.Args(r.id);
    // The row says it has arguments: not finding them is damage, not an answer.
    if (!args.ok()) Bad("", absl::StrCat("corrupt table ", t.path(), ": ", args.status().message()), 500);
    // Merge the event's own arguments after uid.
    if (args->size() > 2 && args->front() == '{') {
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
    if (p.global()) out.append(",\"global\":true");
    if (p.labels_size() > 0) {
      out.append(",\"labels\":[");
      for (int k = 0; k < p.labels_size(); ++k) {
        if (k) out.push_back(',');
        AppendJsonString(&out, p.labels(k));
      }
      out.push_back(']');
    }
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

namespace {

// A window answer produced kChunkItems items at a time: AppendWindowHead,
// the items, AppendWindowTail, with the comma after the last element held
// back, exactly as AppendWindowJson writes it. The items are cut into pieces
// up front so each piece's memory is freed once it has been written.
class WindowStream : public ChunkSource {
 public:
  WindowStream(const Table* table, const WindowRequest& req, WindowResult res)
      : table_(table), req_(req), num_items_(res.items.size()) {
    AppendWindowHead(*table, res, &head_);
    for (size_t i = 0; i < res.items.size(); i += kChunkItems) {
      pieces_.emplace_back(res.items.begin() + i,
                           res.items.begin() + std::min(res.items.size(), i + kChunkItems));
    }
    res.items = {};
    meta_ = std::move(res);
    held_ = num_items_ * sizeof(WindowItem) + head_.size();
  }

  bool Next(std::string* out) override {
    const size_t from = out->size();
    if (!started_) {
      started_ = true;
      out->append(head_);
      head_ = {};
    } else if (next_ < pieces_.size()) {
      if (comma_held_) out->append(",\n");
      comma_held_ = false;
      std::vector<WindowItem>& piece = pieces_[next_++];
      // Without arguments an item cannot fail to format (only reading args can).
      for (const WindowItem& item : piece) AppendItemJson(*table_, item, false, out).IgnoreError();
      held_ -= std::min<uint64_t>(held_, piece.size() * sizeof(WindowItem));
      piece = {};
    }
    if (out->size() - from >= 2 && out->compare(out->size() - 2, 2, ",\n") == 0) {
      out->resize(out->size() - 2);
      comma_held_ = true;
    }
    if (next_ < pieces_.size()) return true;
    AppendWindowTail(*table_, req_, meta_, num_items_, TraceJsonOptions(), out);
    held_ = 0;
    return false;
  }

  uint64_t held_bytes() const override { return held_; }

 private:
  const Table* table_;
  WindowRequest req_;
  WindowResult meta_;  // without its items
  size_t num_items_;
  std::string head_;
  std::vector<std::vector<WindowItem>> pieces_;
  size_t next_ = 0;
  bool started_ = false;
  bool comma_held_ = false;
  std::atomic<uint64_t> held_{0};
};

}  // namespace

void Drain(Reply* r) {
  if (!r->chunks) return;
  while (r->chunks->Next(&r->body)) {
  }
  r->chunks.reset();
}

Reply WindowReply(const Table& t, const Params& p) { return WindowReply(t, p, false); }

namespace {

// The window call's request from its parameters (400s thrown as BadRequest).
struct WindowAsk {
  WindowRequest req;
  std::vector<uint32_t> tracks;
  Span span;
};

WindowAsk ParseWindow(const Table& t, const Params& p) {
  WindowAsk a;
  a.span = SpanParams(t, p, "start_us", "end_us");
  a.req.start = a.span.start;
  a.req.end = a.span.end;
  a.req.resolution = DurationParam(p, "resolution_us", (a.span.end - a.span.start) / 2000);
  a.req.limit = UintParam(p, "limit", kMaxWindowItems, kMaxWindowItems);
  if (a.req.limit == 0) a.req.limit = kMaxWindowItems;
  bool all = false;
  a.tracks = SelectTracks(t, p, &all);
  if (!all) a.req.tracks = a.tracks;
  return a;
}

}  // namespace

bool IsHeavyCall(const Table* t, std::string_view call, const Params& p) {
  if (call == "stats") return true;
  try {
    if (call == "window" && t) {
      const WindowAsk a = ParseWindow(*t, p);
      if (a.req.resolution == 0) return true;
      if (static_cast<double>(a.span.end - a.span.start) / static_cast<double>(a.req.resolution) >
          kHeavyBins) {
        return true;
      }
      return EstimateEvents(*t, a.tracks, a.span.start, a.span.end) > kHeavyEvents;
    }
  } catch (const BadRequest&) {
    return false;  // answered at once with its 400
  }
  if (call == "xprof") {
    const std::string* res = Get(p, "resolution");
    const std::string* uid = Get(p, "unique_id");
    const std::string* st = Get(p, "start_time_ms");
    uint64_t bins = 8000;
    if (res && !res->empty() && !absl::SimpleAtoi(Av(*res), &bins)) return false;
    return bins == 0 || bins > kHeavyBins || (uid && !uid->empty() && (!st || st->empty()));
  }
  return false;
}

uint64_t WorkingBytesEstimate(const Table& t, std::string_view call, const Params& p) {
  try {
    if (call == "stats") {
      const Span s = SpanParams(t, p, "start_us", "end_us");
      bool all = false;
      const std::vector<uint32_t> tracks = SelectTracks(t, p, &all);
      const double est = std::min<double>(EstimateEvents(t, tracks, s.start, s.end), kStatsEventCap);
      return static_cast<uint64_t>(est * (sizeof(WindowItem) + 2 * sizeof(int64_t)));
    }
    if (call == "window") {
      // The query's vector, and its copy cut into pieces for streaming.
      return static_cast<uint64_t>(WindowItemsEstimate(t, p) * 2 * sizeof(WindowItem));
    }
  } catch (const BadRequest&) {
  }
  return 0;
}

double WindowItemsEstimate(const Table& t, const Params& p) {
  try {
    const WindowAsk a = ParseWindow(t, p);
    double est = std::min<double>(EstimateEvents(t, a.tracks, a.span.start, a.span.end),
                                  static_cast<double>(a.req.limit));
    if (a.req.resolution > 0) {
      const double bins = static_cast<double>(a.span.end - a.span.start) / static_cast<double>(a.req.resolution);
      est = std::min(est, 2.0 * (bins + 1) * static_cast<double>(a.tracks.size()));
    }
    return est;
  } catch (const BadRequest&) {
    return 0;
  }
}

Reply WindowReply(const Table& t, const Params& p, bool stream) {
  return Guard([&] {
    WindowAsk ask = ParseWindow(t, p);
    WindowRequest& req = ask.req;
    const Span s = ask.span;
    const std::vector<uint32_t>& tracks = ask.tracks;
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
    if (stream && res->items.size() >= kStreamItems) {
      Reply r;
      r.chunks = std::make_shared<WindowStream>(&t, req, *std::move(res));
      return r;
    }
    std::string out;
    out.reserve(res->items.size() * 160 + 4096);
    if (absl::Status s = AppendWindowJson(t, req, *res, TraceJsonOptions(), &out); !s.ok()) {
      return ErrorReply(500, Sv(s.message()));
    }
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
    if (!args.ok() && !absl::IsNotFound(args.status())) return ErrorReply(500, Sv(args.status().message()));
    std::string thread_time;
    absl::Status tt = AppendThreadTime(t, id, &thread_time);
    if (!tt.ok() && !absl::IsNotFound(tt)) return ErrorReply(500, Sv(tt.message()));
    if (!args.ok() && !tt.ok()) {
      return ErrorReply(404, absl::StrCat("no arguments nor thread time stored for event ", id), "id");
    }
    return Json(absl::StrCat("{\"id\":", id, ",\"args\":", args.ok() ? *args : "{}", thread_time, "}\n"));
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
                    ",\"scanned_items\":", r.scanned, ",\"indexed\":", r.indexed ? "true" : "false");
    if (const std::string* c = Get(p, "count"); c && *c == "1") {
      // Over the whole span, whatever the cursor: a lower bound past the budget.
      SearchRequest req;
      req.names = names;
      req.tracks = tracks;
      req.start = s.start;
      req.end = s.end;
      absl::StatusOr<SearchCount> n = CountMatches(t, std::move(req), kSearchCountBudget);
      if (!n.ok()) Bad("", std::string(n.status().message()), 500);
      absl::StrAppend(&out, ",\"total\":", n->total, ",\"total_exact\":", n->exact ? "true" : "false",
                      ",\"counted_to_us\":", AbsoluteMicros(t, n->counted_to));
    }
    out.append("}\n");
    return Json(std::move(out));
  });
}

Reply StatsReply(const Table& t, const Params& p) {
  return Guard([&] {
    const Span s = SpanParams(t, p, "start_us", "end_us");
    const uint64_t top = std::max<uint64_t>(1, UintParam(p, "top", 20, 1000));
    bool all = false;
    const std::vector<uint32_t> tracks = SelectTracks(t, p, &all);
    absl::StatusOr<RangeStats> r = ComputeRangeStats(t, all ? std::vector<uint32_t>{} : tracks, s.start, s.end,
                                                     kStatsEventCap);
    if (!r.ok()) return ErrorReply(500, Sv(r.status().message()));
    std::string out;
    absl::StrAppend(&out, "{\"start_us\":", AbsoluteMicros(t, s.start), ",\"end_us\":",
                    AbsoluteMicros(t, s.end), ",\"covered_to_us\":", AbsoluteMicros(t, r->covered_to),
                    ",\"events\":", r->events, ",\"truncated\":", r->truncated ? "true" : "false",
                    ",\"num_tracks\":", r->tracks.size(), ",\"num_names\":", r->names.size(), ",\"tracks\":[");
    for (size_t i = 0; i < r->tracks.size() && i < top; ++i) {
      const auto& [id, a] = r->tracks[i];
      const proto::Track& tr = t.resources().tracks(id);
      if (i) out.push_back(',');
      absl::StrAppend(&out, "\n{\"track\":", id, ",\"pid\":");
      AppendPid(t, tr.process(), &out);
      out.append(",\"name\":");
      AppendJsonString(&out, tr.name());
      absl::StrAppend(&out, ",\"count\":", a.count, ",\"total_us\":", Us(a.total), ",\"self_us\":", Us(a.self), "}");
    }
    out.append("\n],\"names\":[");
    for (size_t i = 0; i < r->names.size() && i < top; ++i) {
      const auto& [id, a] = r->names[i];
      if (i) out.push_back(',');
      out.append("\n{\"name\":");
      AppendJsonString(&out, t.String(id));
      absl::StrAppend(&out, ",\"count\":", a.count, ",\"total_us\":", Us(a.total), ",\"self_us\":", Us(a.self),
                      ",\"slices\":", a.slices, ",\"min_us\":", Us(a.min), ",\"avg_us\":",
                      Us(a.slices ? a.total / static_cast<int64_t>(a.slices) : 0), ",\"max_us\":", Us(a.max), "}");
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
