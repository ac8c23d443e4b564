// Pipelined ingest: readers run on their own threads and hand their sink calls
// in batches to one consumer that applies them to the real sink (the table
// builder), so parsing and building use different cores, and several inputs
// parse at once.
//
// Each reader gets a ProducerSink. It answers Intern, track and time calls
// itself, with ids local to that reader, and records every call in order;
// the consumer (Drain) translates local ids to the builder's and replays the
// calls. Translation is an array lookup per id; each distinct string is
// interned into the builder once per reader.
//
// Contract:
//  - ProducerSink is used by one reader thread; Drain by one consumer thread.
//  - Call Close() on a ProducerSink when its reader returns (ok or not).
//  - If the consumer fails (e.g. spilling failed), producers' Add() returns
//    that error from then on, so readers stop.
//  - Memory: at most `max_batches` batches of about kBatchOps calls wait.
#ifndef TRACETABLE_STORE_PIPELINED_SINK_H_
#define TRACETABLE_STORE_PIPELINED_SINK_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "store/event_sink.h"

namespace tracetable {

class TableBuilder;

namespace pipeline {

// One recorded sink call.
struct Op {
  enum Type : uint8_t {
    kBeginInput, kString, kThreadTrack, kCounterTrack, kAsyncTrack, kInstantTrack, kProcessName,
    kProcessSortIndex, kProcessLabel, kThreadName, kThreadSortIndex, kInputField,
    kEvent, kSkipped, kWarn, kOrigin,
  };
  Type type = kEvent;
  bool pid_number = true, tid_number = true;
  int64_t number = 0;  // sort index, skip count, origin ns
  std::string a, b, c;  // texts: pid, tid, names, keys, JSON
  Event event;          // kEvent: ids local; args_json points into `c`
};

// Batches are recycled with their Ops, so the strings in them keep their
// capacity: filling a batch allocates nothing once warm.
struct Batch {
  int producer = 0;
  size_t used = 0;       // ops[0, used) are this batch's calls
  std::vector<Op> ops;
};

}  // namespace pipeline

class PipelineQueue;

class ProducerSink : public EventSink {
 public:
  ProducerSink(PipelineQueue* queue, int producer);
  ~ProducerSink() override;

  void BeginInput(std::string_view path, std::string_view host) override;
  uint32_t Intern(std::string_view s) override;
  absl::StatusOr<int64_t> ToRelativePs(int64_t abs_ns, int32_t sub_ns_ps) override;
  uint32_t ThreadTrack(IdToken pid, IdToken tid) override;
  uint32_t CounterTrack(IdToken pid, std::string_view counter, std::string_view series) override;
  uint32_t AsyncTrack(IdToken pid, std::string_view name) override;
  uint32_t InstantTrack(IdToken pid, bool global) override;
  void SetProcessName(IdToken pid, std::string_view name) override;
  void SetProcessSortIndex(IdToken pid, int64_t index) override;
  void AddProcessLabel(IdToken pid, std::string_view label) override;
  void SetThreadName(IdToken pid, IdToken tid, std::string_view name) override;
  void SetThreadSortIndex(IdToken pid, IdToken tid, int64_t index) override;
  void SetInputField(std::string_view key, std::string_view json) override;
  absl::Status Add(const Event& event) override;
  void CountSkipped(std::string_view reason, uint64_t n = 1) override;
  void Warn(std::string_view message) override;

  // Sends what is buffered and tells the consumer this producer is done.
  void Close();

 private:
  pipeline::Op& Push(pipeline::Op::Type type);
  uint32_t Track(pipeline::Op::Type type, IdToken pid, std::string_view x, IdToken tid,
                 std::string_view y);
  void Send();

  PipelineQueue* queue_;
  int producer_;
  std::unique_ptr<pipeline::Batch> batch_;
  absl::flat_hash_map<std::string, uint32_t> strings_;
  absl::flat_hash_map<std::string, uint32_t> tracks_;
  uint32_t next_track_ = 0;
  bool have_origin_ = false;
  int64_t origin_ns_ = 0;
  bool closed_ = false;
};

class PipelineQueue {
 public:
  explicit PipelineQueue(int producers, size_t max_batches = 8);

  // Applies every producer's calls to `sink` until all producers closed.
  // Returns the first failure (the producers then see it from Add()).
  absl::Status Drain(TableBuilder* sink);

  // Producer side.
  void Push(std::unique_ptr<pipeline::Batch> batch);
  std::unique_ptr<pipeline::Batch> NewBatch(int producer);
  void Close(int producer);
  absl::Status failure();
  // Stops everything: producers see `status` from Add(), Drain returns it.
  void Fail(const absl::Status& status);

 private:
  absl::Status Apply(TableBuilder* sink, pipeline::Batch& batch);

  struct Translation {
    std::vector<uint32_t> strings;
    std::vector<uint32_t> tracks;
    int input = -1;
    int64_t offset_ps = 0;  // local relative time -> table relative time
  };
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<std::unique_ptr<pipeline::Batch>> batches_;
  std::vector<std::unique_ptr<pipeline::Batch>> free_;
  size_t max_batches_;
  int open_producers_;
  absl::Status failure_;
  std::vector<Translation> translations_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_PIPELINED_SINK_H_
