// libFuzzer target: the Chrome JSON reader (top level, event parser, resync)
// on arbitrary bytes, lenient and --strict. Besides crashes and hangs
// (libFuzzer, ASan), aborts on a wrong answer: an error that is not
// InvalidArgument naming the file, or input --strict accepts that the
// lenient reading reads differently.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ingest/chrome_json/reader.h"
#include "tests/chrome_json/collecting_sink.h"
#include "tests/fuzz/fuzz_input.h"

using tracetable::ReadChromeJson;
using tracetable::ReadOptions;
using tracetable::testing_sink::CollectingSink;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tracetable::fuzz::AsFile(data, size);
  CollectingSink lenient, strict;
  ReadOptions options;
  absl::Status l = ReadChromeJson(path, "", &lenient, options);
  options.strict = true;
  absl::Status s = ReadChromeJson(path, "", &strict, options);
  for (const absl::Status* st : {&l, &s}) {
    if (!st->ok() && (st->code() != absl::StatusCode::kInvalidArgument ||
                      std::string(st->message()).rfind(path + ": ", 0) != 0)) {
      std::abort();
    }
  }
  if (s.ok() && (!l.ok() || lenient.events.size() != strict.events.size() ||
                 lenient.SkippedTotal() != strict.SkippedTotal())) {
    std::abort();
  }
  return 0;
}
