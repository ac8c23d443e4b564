#include "ingest/origin_probe.h"

#include "absl/strings/str_cat.h"

namespace tracetable {
namespace {

// Takes nothing but the first conversion, then stops the reader at its next
// event (a reader stops on the first failed Add).
class ProbeSink : public MetadataDroppingSink {
 public:
  bool found() const { return found_; }
  int64_t origin_ns() const { return origin_ns_; }

  void BeginInput(std::string_view, std::string_view) override {}
  uint32_t Intern(std::string_view) override { return 0; }
  absl::StatusOr<int64_t> ToRelativePs(int64_t abs_ns, int32_t) override {
    if (!found_) {
      found_ = true;
      origin_ns_ = abs_ns;
    }
    return 0;
  }
  uint32_t ThreadTrack(IdToken, IdToken) override { return 0; }
  uint32_t CounterTrack(IdToken, std::string_view, std::string_view) override { return 0; }
  uint32_t AsyncTrack(IdToken, std::string_view) override { return 0; }
  uint32_t InstantTrack(IdToken, bool) override { return 0; }
  absl::Status Add(const Event&) override {
    return found_ ? absl::CancelledError(kDone) : absl::OkStatus();
  }
  void CountSkipped(std::string_view, uint64_t) override {}
  void Warn(std::string_view) override {}

  static constexpr char kDone[] = "origin found";

 private:
  bool found_ = false;
  int64_t origin_ns_ = 0;
};

}  // namespace

absl::StatusOr<int64_t> FirstTimestampNs(const InputFile& input) {
  ProbeSink sink;
  absl::Status s = ReadInput(input, &sink, nullptr);
  if (sink.found()) return sink.origin_ns();
  if (!s.ok()) return s;
  return absl::NotFoundError(absl::StrCat(input.path, ": no timed event"));
}

}  // namespace tracetable
