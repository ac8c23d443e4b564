// InputWindow: a sliding window over a ByteSource. The reader keeps only the
// bytes it still needs (from the start of the value being read) and appends
// the next chunk when it runs out, so memory is one chunk plus the largest
// value in flight.
//
// Contract:
//  - data()[0, size()) are stream bytes starting at stream offset base().
//  - At least kPadding readable bytes are allocated past size(), as
//    simdjson requires to parse in place (their content is arbitrary), and
//    kFront writable bytes before data(), so a run of events can be
//    bracketed as "[...]" in place.
//  - Refill(keep_from) drops bytes before keep_from (so every index the
//    caller holds must be reduced by keep_from), then appends one chunk.
//    It returns false at the end of the stream.
//  - Restart(source, base) drops every byte and continues with another
//    source positioned at stream offset base.
#ifndef TRACETABLE_INGEST_CHROME_JSON_INPUT_WINDOW_H_
#define TRACETABLE_INGEST_CHROME_JSON_INPUT_WINDOW_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "ingest/chrome_json/byte_source.h"

namespace tracetable::chrome_json {

class InputWindow {
 public:
  static constexpr size_t kPadding = 128;  // >= SIMDJSON_PADDING + 1
  static constexpr size_t kFront = 8;

  InputWindow(ByteSource* source, size_t chunk_bytes);

  const char* data() const { return buf_.get() + kFront; }
  // The reader may overwrite data()[-1 .. size()] temporarily (restoring
  // them before the next Refill).
  char* mutable_data() { return buf_.get() + kFront; }
  size_t size() const { return end_; }
  uint64_t base() const { return base_; }
  // End of the allocation: parsers may read (not use) bytes up to here.
  const char* alloc_end() const { return buf_.get() + cap_; }
  bool eof() const { return eof_; }

  absl::StatusOr<bool> Refill(size_t keep_from);
  // Empties the window to read `source` from here on; its next byte is at
  // stream offset `base` (a reader rereading from there).
  void Restart(ByteSource* source, uint64_t base);

 private:
  void Reserve(size_t needed);
  static void ZeroPadding(char* at);

  ByteSource* source_;
  size_t chunk_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  size_t end_ = 0;
  uint64_t base_ = 0;
  bool eof_ = false;
};

}  // namespace tracetable::chrome_json

#endif  // TRACETABLE_INGEST_CHROME_JSON_INPUT_WINDOW_H_
