// libFuzzer target: the XSpace (.xplane.pb) reader on arbitrary bytes.
// Besides crashes and hangs, aborts on an error that does not name the file.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "google/protobuf/stubs/logging.h"
#include "ingest/xspace/reader.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/xspace/collecting_sink.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Invalid UTF-8 in strings is reported by the reader; protobuf's own log
  // line per input would drown libFuzzer's output.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tracetable::fuzz::AsFile(data, size);
  tracetable::testing::CollectingSink sink;
  absl::Status s = tracetable::ReadXSpace(path, "", &sink);
  if (!s.ok() && std::string(s.message()).find(path) == std::string::npos) std::abort();
  return 0;
}
