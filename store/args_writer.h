// ArgsWriter: encodes and writes the events' argument blocks
// (format/args_codec.h) on a thread of its own, so the building thread —
// the one every other waits on while a Kineto trace is read — only gathers
// each block's texts. Splitting, encoding and compressing them was a third
// of its work there (Kineto 10M: ~1.5 of ~5 CPU-s).
//
// Contract:
//  - Add(id, json) in increasing id order; a block (ids >> kArgsBlockShift)
//    is handed to the thread when the next one begins, and Put to `out`
//    under ArgsBlockKey(block) exactly as the building thread would have:
//    the same keys, values and order.
//  - Close() hands over the last block, waits until all are written, closes
//    `out` and returns the first error; a later Add() returns it too.
//  - Memory: besides the block being gathered and the one being written,
//    at most kMaxQueued blocks or kMaxQueuedBytes of texts wait (at least
//    one block); Add() waits for the thread beyond that.
//  - Destroyed without Close() (a failed ingest), the thread stops and what
//    waits is dropped.
#ifndef TRACETABLE_STORE_ARGS_WRITER_H_
#define TRACETABLE_STORE_ARGS_WRITER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "format/args_codec.h"
#include "store/sorted_runs.h"

namespace tracetable {

class ArgsWriter {
 public:
  explicit ArgsWriter(std::unique_ptr<RunWriter> out);
  ~ArgsWriter();
  ArgsWriter(const ArgsWriter&) = delete;
  ArgsWriter& operator=(const ArgsWriter&) = delete;

  absl::Status Add(uint64_t id, std::string_view json);
  absl::Status Close();

 private:
  static constexpr size_t kMaxQueued = 64;
  static constexpr size_t kMaxQueuedBytes = size_t{8} << 20;
  // The thread is woken once this many blocks or bytes wait, not for each:
  // it writes a block faster than one is gathered, so it slept after every
  // block (gen 1M: 742 sleeps, each a futex wake and an interrupt to the
  // other core, which cost both cores a VM exit).
  static constexpr size_t kWakeBlocks = 4;
  static constexpr size_t kWakeBytes = size_t{1} << 20;
  // Written blocks' buffers kept for reuse (fresh pages cost more than the
  // copy), unless one grew past kMaxSpareBytes: enough for the blocks
  // gathered while the thread sleeps.
  static constexpr size_t kMaxSpares = 2 * kWakeBlocks;
  static constexpr size_t kMaxSpareBytes = size_t{1} << 20;

  struct Block {
    uint64_t number = 0;
    std::string texts;                                   // the texts, one after another
    std::vector<std::pair<uint32_t, size_t>> entries;  // (slot, end of its text)
  };

  absl::Status HandOver();
  void Run();
  absl::Status Write(const Block& block);

  std::unique_ptr<RunWriter> out_;      // the thread's
  ArgsBlockEncoder encoder_;            // the thread's
  // The adding thread's, on cache lines of their own: block_ shared one
  // with the end of encoder_, which the thread writes for every argument,
  // and each Add waited for that line to come back (gen 10M: 78% of Add's
  // samples on its first read of block_, ~0.1 CPU-s).
  alignas(64) Block block_;  // being gathered
  bool gathering_ = false;

  alignas(64) std::mutex mu_;
  std::condition_variable work_, done_;
  std::deque<Block> queue_;
  size_t queued_bytes_ = 0;
  std::vector<Block> spare_;  // written blocks, their buffers kept
  bool closing_ = false;
  bool abandon_ = false;
  absl::Status status_;  // the thread's first error
  std::thread thread_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_ARGS_WRITER_H_
