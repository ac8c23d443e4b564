#include "ingest/chrome_json/input_window.h"

#include <algorithm>
#include <cstring>

namespace tracetable::chrome_json {

InputWindow::InputWindow(ByteSource* source, size_t chunk_bytes)
    : source_(source), chunk_(chunk_bytes) {
  // Room for a chunk plus the tail kept from the previous one.
  Reserve(2 * chunk_);
}

void InputWindow::ZeroPadding(char* at) {
  // Padding bytes are never part of the input, but simdjson may read them:
  // keep them defined (for valgrind and MSan), without clearing the whole
  // buffer.
  std::memset(at, 0, kPadding);
}

void InputWindow::Reserve(size_t needed) {
  size_t want = kFront + needed + kPadding;
  if (want <= cap_) return;
  // Grow geometrically for few copies, but by at most 64 MiB at a time so a
  // large event does not double the memory it needs.
  size_t cap = std::max(want, std::min(cap_ * 2, cap_ + (size_t{64} << 20)));
  std::unique_ptr<char[]> bigger(new char[cap]);
  std::memset(bigger.get(), 0, kFront);
  if (end_ > 0) std::memcpy(bigger.get() + kFront, buf_.get() + kFront, end_);
  ZeroPadding(bigger.get() + kFront + end_);
  buf_ = std::move(bigger);
  cap_ = cap;
}

absl::StatusOr<bool> InputWindow::Refill(size_t keep_from) {
  if (keep_from > 0) {
    std::memmove(buf_.get() + kFront, buf_.get() + kFront + keep_from, end_ - keep_from);
    end_ -= keep_from;
    base_ += keep_from;
  }
  if (eof_) return false;
  Reserve(end_ + chunk_);
  // Fill up to a whole chunk: fewer, larger reads keep the per-refill cost
  // (memmove of the kept tail, scanner restarts) negligible.
  size_t got_total = 0;
  while (got_total < chunk_) {
    absl::StatusOr<size_t> got =
        source_->Read(buf_.get() + kFront + end_, cap_ - kFront - kPadding - end_);
    if (!got.ok()) return got.status();
    if (*got == 0) {
      eof_ = true;
      break;
    }
    end_ += *got;
    got_total += *got;
  }
  ZeroPadding(buf_.get() + kFront + end_);
  return got_total > 0;
}

void InputWindow::Restart(ByteSource* source, uint64_t base) {
  source_ = source;
  end_ = 0;
  base_ = base;
  eof_ = false;
  ZeroPadding(buf_.get() + kFront);
}

}  // namespace tracetable::chrome_json
