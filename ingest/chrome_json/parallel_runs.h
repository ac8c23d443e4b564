// ParallelRuns: parses runs of traceEvents elements of one input on worker
// threads while the reader (reader.cc) keeps reading, and keeps the table
// the same as a one-thread read.
//
// Contract:
//  - The reader finds each run (complete elements, from an element's '{',
//    as its fast path does) and hands it to Dispatch, which copies it; the
//    reader's own sink (`reader_sink`) must make no call between a Dispatch
//    and the next Sync (the reader's calls would land before the runs').
//  - Each run's sink calls go to its own slot of the pipeline, added at
//    Dispatch: the builder applies runs in input order, after what the
//    reader recorded before them.
//  - Only once the input's origin is known (ready()): a run's times are
//    relative to it, as if read by the reader.
//  - A run stops at its first JSON or event error (the reader's fast path
//    does the same and rereads from there, one event at a time, to skip or
//    report exactly). Every run dispatched after a stopped one is dropped,
//    never applied. Sync waits for every run and returns where the first
//    stopped run stopped; the reader rereads the input from there.
//  - Memory: at most max_in_flight() runs are copied or recorded and not
//    yet applied; Dispatch waits for the builder beyond that.
#ifndef TRACETABLE_INGEST_CHROME_JSON_PARALLEL_RUNS_H_
#define TRACETABLE_INGEST_CHROME_JSON_PARALLEL_RUNS_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ingest/chrome_json/input_error.h"
#include "store/pipelined_sink.h"

namespace tracetable::chrome_json {

class EventParser;

struct ParallelOptions {
  int threads = 2;
  // Bytes per run; 0 picks from `threads` (test hook: small runs put run
  // boundaries everywhere).
  size_t run_bytes = 0;
};

class ParallelRuns {
 public:
  ParallelRuns(PipelineQueue* queue, InputClock* clock, ProducerSink* reader_sink,
               const ParallelOptions& options);
  ~ParallelRuns();
  ParallelRuns(const ParallelRuns&) = delete;
  ParallelRuns& operator=(const ParallelRuns&) = delete;

  bool ready() const { return clock_->have_origin; }
  size_t run_bytes() const { return run_bytes_; }
  bool idle() const { return jobs_.empty(); }

  // `run` is the text of complete elements starting with '{' at stream
  // offset `offset`; `errors` names the input in messages.
  absl::Status Dispatch(const char* run, size_t len, uint64_t offset,
                        const InputErrorContext* errors);

  // Where a stopped run stopped: the reader rereads from `resume` (a
  // stream offset; `need_value` when that is the run's first element) one
  // event at a time up to `run_end`.
  struct Stop {
    uint64_t resume = 0;
    bool need_value = false;
    uint64_t run_end = 0;
  };
  // Waits for every dispatched run. On a stop, drops the runs after it and
  // starts the workers afresh (new local ids) for the next Dispatch.
  absl::StatusOr<std::optional<Stop>> Sync();

  // 'X' events without dur in the runs applied so far (EventParser::Finish
  // reports the input's total).
  uint64_t x_without_dur() const { return x_without_dur_; }

 private:
  struct Job {
    int slot = 0;
    uint64_t offset = 0;  // of the run's first byte
    size_t len = 0;
    std::unique_ptr<char[]> text;  // "[" run "]" and padding
    // Results, set by the worker.
    bool done = false;
    absl::Status status;
    std::optional<Stop> stop;
    uint64_t x_without_dur = 0;
  };
  struct Worker;

  void StartWorkers(const InputErrorContext* errors);
  void StopWorkers();
  void Work(Worker* w);
  void Parse(Worker* w, Job* job);

  PipelineQueue* queue_;
  InputClock* clock_;
  ProducerSink* reader_sink_;
  const int threads_;
  size_t run_bytes_;
  size_t max_in_flight_;
  std::vector<std::unique_ptr<Worker>> workers_;
  const InputErrorContext* errors_ = nullptr;

  std::mutex mu_;
  std::condition_variable work_, done_;
  std::deque<std::shared_ptr<Job>> jobs_;     // dispatched since the last Sync
  std::deque<std::shared_ptr<Job>> pending_;  // not yet taken by a worker
  std::deque<int> unapplied_;                 // slots of recent runs, oldest first
  bool stopping_ = false;
  uint64_t x_without_dur_ = 0;
};

}  // namespace tracetable::chrome_json

#endif  // TRACETABLE_INGEST_CHROME_JSON_PARALLEL_RUNS_H_
