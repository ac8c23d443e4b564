// Input discovery and dispatch: turns command-line inputs (files, or profile
// folders such as <logdir>/plugins/profile/<run>/) into a list of typed input
// files, and reads each one into a sink with the right reader.
#ifndef TRACETABLE_INGEST_INPUT_H_
#define TRACETABLE_INGEST_INPUT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/event_sink.h"
#include "store/table_builder.h"

namespace tracetable {

namespace chrome_json {
class ParallelRuns;
}  // namespace chrome_json

struct InputFile {
  enum class Kind { kChromeJson, kXSpace };
  std::string path;
  Kind kind = Kind::kChromeJson;
  std::string host;  // empty: the reader decides (XSpace) or none (one JSON)
  uint64_t bytes = 0;
};

// Files stand for themselves; a folder stands for every *.xplane.pb, *.json
// and *.json.gz in it (sorted by name). With more than one input, each JSON
// input's host is its file name without extensions.
absl::StatusOr<std::vector<InputFile>> ExpandInputs(const std::vector<std::string>& args);

// A host name from an input's file name: "host1.trace.json.gz" -> "host1",
// "10.0.0.1_6003.xplane.pb" -> "10.0.0.1_6003".
std::string HostFromFileName(const std::string& path);

using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;
// `strict`: a bad event or a truncated input fails the read instead of being
// skipped and reported (Chrome JSON; see ingest/chrome_json/reader.h).
// `parallel`: parse a Chrome JSON input's events on its threads.
absl::Status ReadInput(const InputFile& input, EventSink* sink, const ProgressFn& progress,
                       bool strict = false, chrome_json::ParallelRuns* parallel = nullptr);

struct ReadInputsOptions {
  bool strict = false;
  // Threads reading the inputs: with several inputs, up to `threads` of them
  // are read at once (each parsed on threads / inputs-at-once threads); one
  // Chrome JSON input is parsed on all of them. 1 reads and parses on one
  // thread. The table is the same at every count.
  int threads = 1;
  // Bytes of events per parallel run; 0 chooses (a test hook).
  size_t run_bytes = 0;
};

// Reads every input into `builder`. Inputs are read on up to
// `options.threads` threads at once, a few inputs ahead of the builder, each
// into its own queue; the calling thread builds, applying each input's
// parsed calls whole and in input order, so the table is the same bytes as
// a one-thread read. `progress` gets bytes done over all inputs (called on
// the reading threads, one call at a time). The first failure in input
// order wins (inputs after it are not applied); the builder is then
// unusable.
absl::Status ReadInputs(const std::vector<InputFile>& inputs, TableBuilder* builder,
                        const ProgressFn& progress, const ReadInputsOptions& options = {});

}  // namespace tracetable

#endif  // TRACETABLE_INGEST_INPUT_H_
