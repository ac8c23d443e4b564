// Writes window answers as a Chrome Trace Event JSON object, so any tool
// that reads Chrome traces reads them:
//   {"traceEvents":[...], "displayTimeUnit":"ns", "tracetable":{...}}
// Times are absolute microseconds with up to six decimals (picoseconds).
// Events carry "tt_id" (the key of their arguments), "tt_depth" (their lane)
// and "tt_args":true when they have arguments, "tts"/"tdur" when they have
// thread time; summaries are "X" events of
// category "tracetable.summary" with args.count.
#ifndef TRACETABLE_QUERY_TRACE_JSON_H_
#define TRACETABLE_QUERY_TRACE_JSON_H_

#include <string>

#include "query/window.h"
#include "store/table.h"

namespace tracetable {

struct TraceJsonOptions {
  bool include_args = false;  // export: inline each event's arguments
  bool include_header = true; // the "tracetable" object
};

// Appends the whole answer object to `out`. Errors only when arguments are
// asked for and an event's cannot be read (a damaged table): the answer
// would lack them, so it is no answer.
absl::Status AppendWindowJson(const Table& table, const WindowRequest& request,
                              const WindowResult& result, const TraceJsonOptions& options,
                              std::string* out);

// The same answer in pieces, for writers that stream it (export, serve):
// head + AppendItemJson for every item + tail, with the comma after the last
// element (an item, or the last metadata event when there is no item) dropped,
// is byte for byte what AppendWindowJson writes.
void AppendWindowHead(const Table& table, const WindowResult& result, std::string* out);
// `num_items`: result.items.size() before the items were handed out.
void AppendWindowTail(const Table& table, const WindowRequest& request,
                      const WindowResult& result, size_t num_items,
                      const TraceJsonOptions& options, std::string* out);

// Pieces, for writers that stream (export).
// `async_threads`: answers draw async slices as "X" events on a thread per
// async track and name it; export writes them as b/e, which need no name.
void AppendMetadataEvents(const Table& table, const std::vector<uint32_t>& tracks,
                          std::string* out, bool async_threads = true);
absl::Status AppendItemJson(const Table& table, const WindowItem& item, bool include_args,
                            std::string* out);
// Every item, in order (large answers are formatted on several threads).
absl::Status AppendItemsJson(const Table& table, const std::vector<WindowItem>& items,
                             bool include_args, std::string* out);

// ,"tts":..,"tdur":.. of an event (whichever it has), in microseconds of the
// thread's clock as the input gave them. NotFound if it has none; DataLoss
// if the table is damaged.
absl::Status AppendThreadTime(const Table& table, uint64_t id, std::string* out);

// Absolute microseconds of a relative time.
std::string AbsoluteMicros(const Table& table, int64_t rel_ps);
void AppendAbsoluteMicros(const Table& table, int64_t rel_ps, std::string* out);

// What answers call a track's kind: "thread", "counter", "async" or
// "instants" (a process's, or in a global process the input's, scoped
// instants).
const char* TrackKindName(const proto::Track& track);

// The pid / tid written for a process or track.
void AppendPid(const Table& table, uint32_t process, std::string* out);
void AppendTid(const Table& table, uint32_t track, std::string* out);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_TRACE_JSON_H_
