#include "query/trace_json.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "format/time.h"
#include "format/json_text.h"
#include "query/parallel_for.h"

namespace tracetable {
namespace {

const char* SummaryKind(EventKind kind) {
  switch (KindGroup(kind)) {
    case 0: return "slice";
    case 1: return "instant";
    default: return "flow";
  }
}

void AppendMeta(std::string* out, std::string_view name, const Table& t, uint32_t process,
                const uint32_t* track, std::string_view arg_key, const std::string& arg_json) {
  out->append("{\"ph\":\"M\",\"name\":\"");
  out->append(name);
  out->append("\",\"pid\":");
  AppendPid(t, process, out);
  out->append(",\"tid\":");
  if (track) {
    AppendTid(t, *track, out);
  } else {
    out->append("0");
  }
  out->append(",\"args\":{\"");
  out->append(arg_key);
  out->append("\":");
  out->append(arg_json);
  out->append("}},\n");
}

std::string Quoted(std::string_view s) {
  std::string q;
  AppendJsonString(&q, s);
  return q;
}

}  // namespace

std::string AbsoluteMicros(const Table& table, int64_t rel_ps) {
  return FormatMicros(static_cast<__int128>(table.meta().origin_ns()) * 1000 + rel_ps);
}

void AppendAbsoluteMicros(const Table& table, int64_t rel_ps, std::string* out) {
  AppendMicros(out, static_cast<__int128>(table.meta().origin_ns()) * 1000 + rel_ps);
}

const char* TrackKindName(const proto::Track& track) {
  switch (track.kind()) {
    case proto::Track::COUNTER: return "counter";
    case proto::Track::ASYNC: return "async";
    case proto::Track::INSTANTS: return "instants";
    default: return "thread";
  }
}

void AppendPid(const Table& t, uint32_t process, std::string* out) {
  const proto::Process& p = t.resources().processes(process);
  if (t.meta().inputs_size() <= 1 && !p.pid_is_number()) {
    AppendJsonString(out, p.pid());
  } else {
    absl::StrAppend(out, p.out_pid());
  }
}

void AppendTid(const Table& t, uint32_t track, std::string* out) {
  const proto::Track& tr = t.resources().tracks(track);
  if (tr.kind() == proto::Track::THREAD && !tr.tid_is_number()) {
    AppendJsonString(out, tr.tid());
  } else {
    absl::StrAppend(out, tr.out_tid());
  }
}

void AppendMetadataEvents(const Table& t, const std::vector<uint32_t>& tracks, std::string* out,
                          bool async_threads) {
  absl::flat_hash_set<uint32_t> processes;
  std::vector<uint32_t> order;
  for (uint32_t track : tracks) {
    const uint32_t p = t.resources().tracks(track).process();
    if (processes.insert(p).second) order.push_back(p);
  }
  for (uint32_t pi : order) {
    const proto::Process& p = t.resources().processes(pi);
    // The global process is no process of the input: its instants say "s":"g".
    if (p.global()) continue;
    if (!p.name().empty()) AppendMeta(out, "process_name", t, pi, nullptr, "name", Quoted(p.name()));
    if (p.has_sort_index()) {
      AppendMeta(out, "process_sort_index", t, pi, nullptr, "sort_index", absl::StrCat(p.sort_index()));
    }
    if (!p.labels().empty()) {
      std::string labels;
      for (const std::string& l : p.labels()) absl::StrAppend(&labels, labels.empty() ? "" : ",", l);
      AppendMeta(out, "process_labels", t, pi, nullptr, "labels", Quoted(labels));
    }
  }
  for (uint32_t track : tracks) {
    const proto::Track& tr = t.resources().tracks(track);
    // Instant tracks are named by their instants' scope, not by metadata: a
    // thread_name would make a thread of them when the answer is read again.
    if (tr.kind() == proto::Track::COUNTER || tr.kind() == proto::Track::INSTANTS) continue;
    if (tr.kind() == proto::Track::ASYNC && !async_threads) continue;
    std::string name = tr.kind() == proto::Track::ASYNC ? absl::StrCat("async: ", tr.name()) : tr.name();
    if (!name.empty()) AppendMeta(out, "thread_name", t, tr.process(), &track, "name", Quoted(name));
    if (tr.has_sort_index()) {
      AppendMeta(out, "thread_sort_index", t, tr.process(), &track, "sort_index",
                 absl::StrCat(tr.sort_index()));
    }
  }
}

absl::Status AppendThreadTime(const Table& t, uint64_t id, std::string* out) {
  absl::StatusOr<ThreadTimeEntry> tt = t.ThreadTime(id);
  if (!tt.ok()) return tt.status();
  if (tt->tts) {
    out->append(",\"tts\":");
    AppendMicros(out, *tt->tts);
  }
  if (tt->tdur) {
    out->append(",\"tdur\":");
    AppendMicros(out, *tt->tdur);
  }
  return absl::OkStatus();
}

absl::Status AppendItemJson(const Table& t, const WindowItem& item, bool include_args, std::string* out) {
  const TileRow& r = item.row;
  const proto::Track& tr = t.resources().tracks(item.track);
  const char* ph = "X";
  if (!item.summary) {
    switch (r.kind) {
      case EventKind::kInstant: ph = "i"; break;
      case EventKind::kCounter: ph = "C"; break;
      case EventKind::kFlowStart: ph = "s"; break;
      case EventKind::kFlowStep: ph = "t"; break;
      case EventKind::kFlowEnd: ph = "f"; break;
      default: break;
    }
  }
  if (tr.kind() == proto::Track::COUNTER) ph = "C";
  absl::StrAppend(out, "{\"ph\":\"", ph, "\",\"pid\":");
  AppendPid(t, tr.process(), out);
  if (tr.kind() != proto::Track::COUNTER) {
    out->append(",\"tid\":");
    AppendTid(t, item.track, out);
  }
  out->append(",\"ts\":");
  AppendAbsoluteMicros(t, r.ts, out);
  out->append(",\"name\":");
  if (tr.kind() == proto::Track::COUNTER) {
    AppendJsonString(out, tr.name());
    if (r.cat != 0) {
      out->append(",\"cat\":");
      AppendJsonString(out, t.String(r.cat));
    }
    out->append(",\"args\":{");
    AppendJsonString(out, tr.series());
    out->push_back(':');
    AppendJsonDouble(out, r.value);
    absl::StrAppend(out, "},\"tt_id\":", r.id, "},\n");
    return absl::OkStatus();
  }
  AppendJsonString(out, t.String(r.name));
  if (item.summary) {
    out->append(",\"cat\":\"tracetable.summary\",\"dur\":");
    AppendMicros(out, r.dur);
    absl::StrAppend(out, ",\"args\":{\"count\":", r.count, ",\"covered_us\":");
    AppendMicros(out, r.covered);
    out->append(",\"longest_us\":");
    AppendMicros(out, r.longest_dur);
    absl::StrAppend(out, ",\"kind\":\"", SummaryKind(r.kind), "\",\"depth\":", r.lane, "}},\n");
    return absl::OkStatus();
  }
  out->append(",\"cat\":");
  AppendJsonString(out, t.String(r.cat));
  if (ph[0] == 'X') {
    out->append(",\"dur\":");
    AppendMicros(out, r.dur);
  }
  if (r.kind == EventKind::kInstant) {
    out->append((r.flags & kFlagScopeGlobal) ? ",\"s\":\"g\"" : (r.flags & kFlagScopeProcess) ? ",\"s\":\"p\"" : ",\"s\":\"t\"");
  }
  if (r.flags & kFlagHasThreadTime) {
    if (absl::Status s = AppendThreadTime(t, r.id, out); !s.ok()) {
      if (!absl::IsNotFound(s)) return s;
      // The row says it has thread time: not finding it is damage.
      return absl::DataLossError(absl::StrCat("corrupt table ", t.path(), ": ", s.message(),
                                              " though its row says it has"));
    }
  }
  if (r.kind >= EventKind::kFlowStart && r.kind <= EventKind::kFlowEnd) {
    out->append(",\"id\":");
    AppendJsonString(out, t.FlowIdText(r.flow_id));
    if (r.flags & kFlagBindEnclosing) out->append(",\"bp\":\"e\"");
  }
  if (r.flow_out || r.flow_in) {
    out->append(",\"bind_id\":");
    AppendJsonString(out, t.FlowIdText(r.flow_out ? r.flow_out : r.flow_in));
    if (r.flow_out) out->append(",\"flow_out\":true");
    if (r.flow_in) out->append(",\"flow_in\":true");
  }
  if (r.flags & kFlagIncomplete) out->append(",\"tt_incomplete\":true");
  if (r.flags & kFlagHasArgs) out->append(",\"tt_args\":true");
  absl::StrAppend(out, ",\"tt_depth\":", r.lane, ",\"tt_id\":", r.id);
  if (include_args && (r.flags & kFlagHasArgs)) {
    // The row says it has arguments: not finding them is damage.
    absl::StatusOr<std::string> args = t.Args(r.id);
    if (!args.ok()) {
      if (!absl::IsNotFound(args.status())) return args.status();
      return absl::DataLossError(absl::StrCat("corrupt table ", t.path(), ": ", args.status().message(),
                                              " though its row says it has"));
    }
    absl::StrAppend(out, ",\"args\":", *args);
  }
  out->append("},\n");
  return absl::OkStatus();
}

absl::Status AppendItemsJson(const Table& t, const std::vector<WindowItem>& items, bool include_args,
                             std::string* out) {
  // Large answers are formatted in one slice per thread; the first straight
  // into `out`, the others into their own strings, appended after.
  constexpr size_t kMinItemsPerThread = 8192;
  const size_t threads =
      std::min<size_t>(QueryThreads(), std::max<size_t>(1, items.size() / kMinItemsPerThread));
  const size_t per = (items.size() + threads - 1) / std::max<size_t>(threads, 1);
  std::vector<std::string> rest(threads > 0 ? threads - 1 : 0);
  std::vector<absl::Status> status(std::max<size_t>(threads, 1));
  ParallelFor(threads, static_cast<int>(threads), [&](size_t k) {
    std::string* into = k == 0 ? out : &rest[k - 1];
    const size_t first = k * per, last = std::min(items.size(), first + per);
    if (k > 0) into->reserve((last - first) * 176);
    for (size_t i = first; i < last && status[k].ok(); ++i) {
      status[k] = AppendItemJson(t, items[i], include_args, into);
    }
  });
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  for (const std::string& slice : rest) out->append(slice);
  return absl::OkStatus();
}

void AppendWindowHead(const Table& t, const WindowResult& res, std::string* out) {
  out->append("{\"traceEvents\":[\n");
  std::vector<uint32_t> tracks;
  for (const WindowItem& item : res.items) {
    if (tracks.empty() || tracks.back() != item.track) tracks.push_back(item.track);
  }
  AppendMetadataEvents(t, tracks, out);
}

void AppendWindowTail(const Table& t, const WindowRequest& req, const WindowResult& res,
                      size_t num_items, const TraceJsonOptions& options, std::string* out) {
  out->append("\n],\"displayTimeUnit\":\"ns\"");
  if (options.include_header) {
    absl::StrAppend(out, ",\"tracetable\":{\"start_us\":", AbsoluteMicros(t, req.start),
                    ",\"end_us\":", AbsoluteMicros(t, req.end),
                    ",\"resolution_us\":", FormatMicros(req.resolution),
                    ",\"level\":", res.level, ",\"bin_us\":", FormatMicros(res.bin),
                    ",\"items\":", num_items, ",\"events\":", res.events,
                    ",\"summaries\":", res.summaries,
                    ",\"truncated\":", res.truncated ? "true" : "false",
                    ",\"tiles_read\":", res.stats.tiles, ",\"bytes_read\":", res.stats.bytes, "}");
  }
  out->append("}\n");
}

absl::Status AppendWindowJson(const Table& t, const WindowRequest& req, const WindowResult& res,
                              const TraceJsonOptions& options, std::string* out) {
  // About 160 bytes an item: reserve once instead of doubling a large string.
  out->reserve(out->size() + 256 + res.items.size() * 176);
  AppendWindowHead(t, res, out);
  if (absl::Status s = AppendItemsJson(t, res.items, options.include_args, out); !s.ok()) return s;
  if (out->size() >= 2 && out->substr(out->size() - 2) == ",\n") out->resize(out->size() - 2);
  AppendWindowTail(t, req, res, res.items.size(), options, out);
  return absl::OkStatus();
}

}  // namespace tracetable
