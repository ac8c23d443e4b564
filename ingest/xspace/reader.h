// Reader for TensorFlow / JAX profiler XSpace files (`*.xplane.pb`).
//
// Contract:
//  - Streams one file into `sink`: BeginInput first, then process / thread
//    metadata and events plane by plane. Peak memory is about one XPlane's
//    bytes and their views (wire_reader.h): the file is walked field by
//    field and each plane is read and decoded on its own. Each calling
//    thread keeps that buffer for its next file unless it grew over 64 MiB.
//  - `host` names the machine; when empty it is XSpace.hostnames[0], or else
//    the file name without ".xplane.pb".
//  - Planes become processes (pid = plane id, or the plane's index when ids
//    collide), lines become threads (tid = display_id if set, else id), events
//    become slices with picosecond start and duration. A line named
//    "_counters_" holds counter samples; a "flow" stat adds a flow event.
//  - Anything not stored is reported through sink->CountSkipped / Warn.
//  - A file that is empty, truncated, corrupt, or not an XSpace at all gives
//    InvalidArgumentError naming the file and the byte offset where decoding
//    failed; a missing file NotFoundError, a read error DataLossError.
//    Truncation and top-level corruption are found before BeginInput; damage
//    inside a plane's events only when that plane is reached. A failing
//    sink->Add stops the read with that status.
//  - `progress(done, total)` is called with bytes of the file handled so far.
#ifndef TRACETABLE_INGEST_XSPACE_READER_H_
#define TRACETABLE_INGEST_XSPACE_READER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "store/event_sink.h"

namespace tracetable {

absl::Status ReadXSpace(
    const std::string& path, std::string_view host, EventSink* sink,
    const std::function<void(uint64_t done, uint64_t total)>& progress = {});

}  // namespace tracetable

#endif  // TRACETABLE_INGEST_XSPACE_READER_H_
