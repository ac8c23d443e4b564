// Chrome Trace Event JSON reader: streams one trace file into an EventSink.
//
// Contract:
//  - Accepts the object form ({"traceEvents": [...], ...}, keys in any order)
//    and the bare array form ([...]), plain or gzip (detected by the magic
//    bytes 1f 8b, not by the file name).
//  - Calls sink->BeginInput(path, host) once the file is open, before any
//    other sink call (a missing file fails without touching the sink).
//  - Streams: the file is read in chunks and each event object is parsed on
//    its own, so memory is bounded by the chunk size (4 MiB) plus the largest
//    single event (at most 64 MiB; larger is an error, as it is almost always
//    an unclosed string) or top-level field (kept up to 16 MiB, larger ones
//    are skipped with a warning), never by the file size.
//  - Times (ts, dur) are microseconds parsed exactly from their decimal text;
//    "displayTimeUnit" only affects display and never changes their unit.
//  - Tolerates what real tracers write when they are killed: an event array
//    with no closing ']', a trailing comma, trailing whitespace, or an event
//    cut off at the end of the file (complete events are kept, the partial one
//    is counted as skipped and reported with Warn).
//  - One bad event (broken JSON inside its own object, invalid UTF-8 in it,
//    a bad ts/dur text, nesting over 1024 levels) is skipped: counted with
//    CountSkipped by reason, the first few reported with Warn (file, byte
//    offset, what was wrong), and reading resumes at the next event: after
//    the event's extent when that is followed by ',' or ']', else at the
//    next "}, {" boundary after the damage whose element is whole valid
//    JSON with a "ph" key (a stray quote makes the extent meaningless), or
//    at a "}]" that reads as the end of the event array.
//  - Damage outside events (the container: the top-level object, the
//    separators of the event array, other top-level fields, a corrupt gzip
//    stream, an empty file, a directory) fails with InvalidArgument
//    (NotFound for a missing file) whose message reads
//      "<path>: byte <offset>: expected ..., got ..."
//    ("decompressed byte" for gzip input, offsets into the decompressed
//    stream). Unknown fields and phases are ignored or counted, never fatal.
//  - With ReadOptions::strict, the first bad event and any truncation fail
//    the read instead (the message above).
//  - Returns the sink's status if sink->Add fails.
#ifndef TRACETABLE_INGEST_CHROME_JSON_READER_H_
#define TRACETABLE_INGEST_CHROME_JSON_READER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "store/event_sink.h"

namespace tracetable {

namespace chrome_json {
class ParallelRuns;
}  // namespace chrome_json

struct ReadOptions {
  // Called after each chunk read from disk with the bytes of the file (as
  // stored on disk, i.e. compressed for gzip) consumed so far and in total.
  std::function<void(uint64_t bytes_done, uint64_t bytes_total)> progress;
  // Fail on the first bad event or on truncation instead of skipping it.
  bool strict = false;
  // When set, runs of events are parsed on its worker threads (the table is
  // the same; see parallel_runs.h). `sink` must then be the ProducerSink it
  // was made with.
  chrome_json::ParallelRuns* parallel = nullptr;
};

// Streams one Chrome Trace Event JSON file (plain or gzip) into `sink`.
absl::Status ReadChromeJson(const std::string& path, std::string_view host,
                            EventSink* sink, const ReadOptions& opts = {});

}  // namespace tracetable

#endif  // TRACETABLE_INGEST_CHROME_JSON_READER_H_
