// libFuzzer target: the XSpace (.xplane.pb) reader on arbitrary bytes.
// Besides crashes and hangs, aborts on an error that does not name the file,
// and when the hand-written plane reader (wire_reader.h) and the generated
// XPlane parser disagree on the same bytes read as one plane.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/stubs/logging.h"
#include "ingest/xspace/reader.h"
#include "ingest/xspace/wire_reader.h"
#include "ingest/xspace/xplane.pb.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/xspace/collecting_sink.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Invalid UTF-8 in strings is reported by the reader; protobuf's own log
  // line per input would drown libFuzzer's output.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

namespace {

// Accept / reject and the shape (lines, events, stats, metadata entries);
// tests/xspace/wire_reader_test.cc compares every value.
void CheckPlaneReaders(const uint8_t* data, size_t size) {
  tracetable::xspace::XPlane want;
  google::protobuf::io::CodedInputStream coded(data, static_cast<int>(size));
  coded.PushLimit(static_cast<int>(size));
  const bool want_ok = want.ParseFromCodedStream(&coded) && coded.BytesUntilLimit() == 0;
  static tracetable::xspace_wire::PlaneView got;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (tracetable::xspace_wire::DecodePlane(bytes, &got) != want_ok) std::abort();
  if (!want_ok) return;
  if (got.lines.size() != static_cast<size_t>(want.lines_size()) ||
      got.plane_stats.size() != static_cast<size_t>(want.stats_size()) ||
      got.event_metadata.size() != want.event_metadata().size() ||
      got.stat_metadata.size() != want.stat_metadata().size()) {
    std::abort();
  }
  for (int i = 0; i < want.lines_size(); ++i) {
    const auto events = got.EventsOf(got.lines[i]);
    if (events.size() != static_cast<size_t>(want.lines(i).events_size())) std::abort();
    for (int j = 0; j < want.lines(i).events_size(); ++j) {
      const auto& e = want.lines(i).events(j);
      if (events[j].metadata_id != e.metadata_id() ||
          got.StatsOf(events[j]).size() != static_cast<size_t>(e.stats_size())) {
        std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CheckPlaneReaders(data, size);
  const std::string& path = tracetable::fuzz::AsFile(data, size);
  tracetable::testing::CollectingSink sink;
  absl::Status s = tracetable::ReadXSpace(path, "", &sink);
  if (!s.ok() && std::string(s.message()).find(path) == std::string::npos) std::abort();
  return 0;
}
