#include "ingest/chrome_json/parallel_runs.h"

#include <algorithm>
#include <cstring>

#include "ingest/chrome_json/event_parser.h"
#include "ingest/chrome_json/input_window.h"
#include "store/thread_name.h"

namespace tracetable::chrome_json {

struct ParallelRuns::Worker {
  std::unique_ptr<ProducerSink> sink;
  std::unique_ptr<EventParser> parser;
  std::thread thread;
};

namespace {
// Runs in flight hold copies of their text, their recordings (batches of
// about 0.85 MB per 0.4 MB of text) and a parser each: this bounds the text,
// so the rest, at any thread count.
constexpr size_t kInFlightBytes = size_t{8} << 20;
constexpr size_t kMaxRunBytes = size_t{4} << 20;
constexpr size_t kMinRunBytes = size_t{256} << 10;
}  // namespace

ParallelRuns::ParallelRuns(PipelineQueue* queue, InputClock* clock, ProducerSink* reader_sink,
                           const ParallelOptions& options)
    : queue_(queue), clock_(clock), reader_sink_(reader_sink), threads_(std::max(options.threads, 1)) {
  // Parsing a run and applying it take about as long, so a short queue
  // stalls one side whenever the other is slow for a run: with one run per
  // worker, one applied and one waiting, 2 cores were 1.6 busy while
  // reading Kineto 10M; twice that, 1.8 (reading 6–10% faster; a run is
  // ~1 MiB of text and ~2 MB of recorded calls, so ~20 MB in flight).
  max_in_flight_ = 2 * static_cast<size_t>(threads_) + 4;
  run_bytes_ = options.run_bytes > 0
                   ? options.run_bytes
                   : std::clamp(kInFlightBytes / max_in_flight_, kMinRunBytes, kMaxRunBytes);
}

ParallelRuns::~ParallelRuns() { StopWorkers(); }

void ParallelRuns::StartWorkers(const InputErrorContext* errors) {
  errors_ = errors;
  for (int i = 0; i < threads_; ++i) {
    auto w = std::make_unique<Worker>();
    w->sink = std::make_unique<ProducerSink>(queue_, clock_);
    w->parser = std::make_unique<EventParser>(w->sink.get(), errors);
    workers_.push_back(std::move(w));
  }
  for (auto& w : workers_) w->thread = std::thread([this, p = w.get()] { Work(p); });
}

void ParallelRuns::StopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    work_.notify_all();
  }
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

absl::Status ParallelRuns::Dispatch(const char* run, size_t len, uint64_t offset,
                                    const InputErrorContext* errors) {
  if (workers_.empty()) StartWorkers(errors);
  reader_sink_->EndSlot();
  while (unapplied_.size() >= max_in_flight_) {
    queue_->WaitApplied(unapplied_.front());
    unapplied_.pop_front();
  }
  if (absl::Status s = queue_->failure(); !s.ok()) return s;
  auto job = std::make_shared<Job>();
  job->slot = queue_->AddSlot(/*streaming=*/false);
  job->offset = offset;
  job->len = len;
  // Bracketed as one array, as the reader's fast path does in place, with
  // the padding simdjson reads past the end.
  job->text.reset(new char[len + 2 + InputWindow::kPadding]);
  job->text[0] = '[';
  std::memcpy(job->text.get() + 1, run, len);
  job->text[len + 1] = ']';
  std::memset(job->text.get() + len + 2, 0, InputWindow::kPadding);
  unapplied_.push_back(job->slot);
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.push_back(job);
  pending_.push_back(std::move(job));
  work_.notify_one();
  return absl::OkStatus();
}

void ParallelRuns::Work(Worker* w) {
  NameThisThread("tt-parse");
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [&] { return !pending_.empty() || stopping_; });
      if (pending_.empty()) return;
      job = std::move(pending_.front());
      pending_.pop_front();
    }
    Parse(w, job.get());
    std::lock_guard<std::mutex> lock(mu_);
    job->done = true;
    done_.notify_all();
  }
}

void ParallelRuns::Parse(Worker* w, Job* job) {
  w->sink->UseSlot(job->slot);
  char* p = job->text.get();
  const size_t n = job->len + 2;
  const uint64_t x_before = w->parser->x_without_dur();
  const char* resume = nullptr;
  job->status = w->parser->ParseBatch(p, n, p + n + InputWindow::kPadding, job->offset - 1, &resume);
  job->x_without_dur = w->parser->x_without_dur() - x_before;
  if (job->status.ok() && resume != nullptr) {
    job->stop = Stop{job->offset - 1 + static_cast<uint64_t>(resume - p), resume == p + 1,
                     job->offset + job->len};
  }
  // Before the slot closes, so the builder never gets past this run into
  // the ones after it.
  if (job->stop || !job->status.ok()) queue_->DiscardFrom(job->slot + 1);
  w->sink->EndSlot();
  job->text.reset();
}

absl::StatusOr<std::optional<ParallelRuns::Stop>> ParallelRuns::Sync() {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] {
    return std::all_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return j->done; });
  });
  std::optional<Stop> stop;
  absl::Status status;
  for (const auto& job : jobs_) {
    x_without_dur_ += job->x_without_dur;
    if (!job->status.ok()) {
      status = job->status;
      break;
    }
    if (job->stop) {
      stop = job->stop;
      break;
    }
  }
  const bool dropped = stop.has_value() || !status.ok();
  jobs_.clear();
  if (!status.ok()) return status;
  if (dropped) {
    // The dropped runs' recordings defined local ids the builder never
    // learns: start every worker with a new id space.
    for (auto& w : workers_) {
      w->parser.reset();
      w->sink = std::make_unique<ProducerSink>(queue_, clock_);
      w->parser = std::make_unique<EventParser>(w->sink.get(), errors_);
    }
    queue_->EndDiscard();
  }
  return stop;
}

}  // namespace tracetable::chrome_json
