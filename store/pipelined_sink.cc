#include "store/pipelined_sink.h"

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/time.h"
#include "store/table_builder.h"

namespace tracetable {
namespace {

using pipeline::Batch;
using pipeline::Op;

constexpr size_t kBatchOps = 16384;

}  // namespace

ProducerSink::ProducerSink(PipelineQueue* queue, int producer)
    : queue_(queue), producer_(producer), batch_(queue->NewBatch(producer)) {
  strings_[""] = 0;
}

ProducerSink::~ProducerSink() { Close(); }

Op& ProducerSink::Push(Op::Type type) {
  if (batch_->used >= kBatchOps) Send();
  if (batch_->used == batch_->ops.size()) batch_->ops.emplace_back();
  Op& op = batch_->ops[batch_->used++];
  op.type = type;
  op.pid_number = op.tid_number = true;
  op.number = 0;
  op.a.clear();
  op.b.clear();
  op.c.clear();
  return op;
}

void ProducerSink::Send() {
  if (batch_->used == 0) return;
  queue_->Push(std::move(batch_));
  batch_ = queue_->NewBatch(producer_);
}

void ProducerSink::Close() {
  if (closed_) return;
  closed_ = true;
  Send();
  queue_->Close(producer_);
}

void ProducerSink::BeginInput(std::string_view path, std::string_view host) {
  Op& op = Push(Op::kBeginInput);
  op.a = std::string(path);
  op.b = std::string(host);
}

uint32_t ProducerSink::Intern(std::string_view s) {
  auto it = strings_.find(Av(s));
  if (it != strings_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace(std::string(s), id);
  Push(Op::kString).a = std::string(s);  // the consumer learns ids in order
  return id;
}

absl::StatusOr<int64_t> ProducerSink::ToRelativePs(int64_t abs_ns, int32_t sub_ns_ps) {
  if (!have_origin_) {
    have_origin_ = true;
    origin_ns_ = abs_ns;
    Push(Op::kOrigin).number = abs_ns;
  }
  return RelativePs(abs_ns, sub_ns_ps, origin_ns_);
}

uint32_t ProducerSink::Track(Op::Type type, IdToken pid, std::string_view x, IdToken tid,
                             std::string_view y) {
  std::string key = absl::StrCat(static_cast<int>(type), pid.is_number ? "n" : "s", Av(pid.text),
                                 "\t", tid.is_number ? "n" : "s", Av(tid.text), "\t", Av(x),
                                 "\t", Av(y));
  auto [it, inserted] = tracks_.try_emplace(std::move(key), next_track_);
  if (inserted) {
    ++next_track_;
    Op& op = Push(type);
    op.a = std::string(pid.text);
    op.pid_number = pid.is_number;
    op.b = type == Op::kThreadTrack ? std::string(tid.text) : std::string(x);
    op.tid_number = tid.is_number;
    op.c = std::string(y);
  }
  return it->second;
}

uint32_t ProducerSink::ThreadTrack(IdToken pid, IdToken tid) {
  return Track(Op::kThreadTrack, pid, "", tid, "");
}

uint32_t ProducerSink::CounterTrack(IdToken pid, std::string_view counter,
                                    std::string_view series) {
  return Track(Op::kCounterTrack, pid, counter, {"", true}, series);
}

uint32_t ProducerSink::AsyncTrack(IdToken pid, std::string_view name) {
  return Track(Op::kAsyncTrack, pid, name, {"", true}, "");
}

uint32_t ProducerSink::InstantTrack(IdToken pid, bool global) {
  // One global track per input, whatever the pid.
  return Track(Op::kInstantTrack, global ? IdToken{"", true} : pid, global ? "g" : "p", {"", true}, "");
}

void ProducerSink::SetProcessName(IdToken pid, std::string_view name) {
  Op& op = Push(Op::kProcessName);
  op.a = std::string(pid.text);
  op.pid_number = pid.is_number;
  op.b = std::string(name);
}

void ProducerSink::SetProcessSortIndex(IdToken pid, int64_t index) {
  Op& op = Push(Op::kProcessSortIndex);
  op.a = std::string(pid.text);
  op.pid_number = pid.is_number;
  op.number = index;
}

void ProducerSink::AddProcessLabel(IdToken pid, std::string_view label) {
  Op& op = Push(Op::kProcessLabel);
  op.a = std::string(pid.text);
  op.pid_number = pid.is_number;
  op.b = std::string(label);
}

void ProducerSink::SetThreadName(IdToken pid, IdToken tid, std::string_view name) {
  Op& op = Push(Op::kThreadName);
  op.a = std::string(pid.text);
  op.pid_number = pid.is_number;
  op.b = std::string(tid.text);
  op.tid_number = tid.is_number;
  op.c = std::string(name);
}

void ProducerSink::SetThreadSortIndex(IdToken pid, IdToken tid, int64_t index) {
  Op& op = Push(Op::kThreadSortIndex);
  op.a = std::string(pid.text);
  op.pid_number = pid.is_number;
  op.b = std::string(tid.text);
  op.tid_number = tid.is_number;
  op.number = index;
}

void ProducerSink::SetInputField(std::string_view key, std::string_view json) {
  Op& op = Push(Op::kInputField);
  op.a = std::string(key);
  op.b = std::string(json);
}

absl::Status ProducerSink::Add(const Event& event) {
  Op& op = Push(Op::kEvent);
  op.event = event;
  op.event.args_json = {};
  if (!event.args_json.empty()) op.c = std::string(event.args_json);
  // Checked once per batch: a failed consumer stops the reader soon.
  if (batch_->used == 1) return queue_->failure();
  return absl::OkStatus();
}

void ProducerSink::CountSkipped(std::string_view reason, uint64_t n) {
  Op& op = Push(Op::kSkipped);
  op.a = std::string(reason);
  op.number = static_cast<int64_t>(n);
}

void ProducerSink::Warn(std::string_view message) { Push(Op::kWarn).a = std::string(message); }

PipelineQueue::PipelineQueue(int producers, size_t max_batches)
    : max_batches_(max_batches), open_producers_(producers), translations_(producers) {}

void PipelineQueue::Push(std::unique_ptr<Batch> batch) {
  std::unique_lock<std::mutex> lock(mu_);
  not_full_.wait(lock, [&] { return batches_.size() < max_batches_ || !failure_.ok(); });
  if (!failure_.ok()) return;  // nobody will read it
  batches_.push_back(std::move(batch));
  not_empty_.notify_one();
}

std::unique_ptr<Batch> PipelineQueue::NewBatch(int producer) {
  std::unique_ptr<Batch> b;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      b = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!b) {
    b = std::make_unique<Batch>();
    b->ops.reserve(kBatchOps);
  }
  b->producer = producer;
  b->used = 0;
  return b;
}

void PipelineQueue::Close(int producer) {
  std::lock_guard<std::mutex> lock(mu_);
  --open_producers_;
  not_empty_.notify_one();
}

void PipelineQueue::Fail(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_.ok()) failure_ = status;
  batches_.clear();
  not_full_.notify_all();
  not_empty_.notify_all();
}

absl::Status PipelineQueue::failure() {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

absl::Status PipelineQueue::Drain(TableBuilder* sink) {
  for (;;) {
    std::unique_ptr<Batch> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      not_empty_.wait(lock, [&] { return !batches_.empty() || open_producers_ == 0; });
      if (batches_.empty()) return failure_;
      batch = std::move(batches_.front());
      batches_.pop_front();
      not_full_.notify_one();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failure_.ok()) continue;  // drop the rest, wait for producers to close
    }
    if (absl::Status s = Apply(sink, *batch); !s.ok()) Fail(s);
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < max_batches_ + 2) free_.push_back(std::move(batch));
  }
}

absl::Status PipelineQueue::Apply(TableBuilder* sink, Batch& batch) {
  Translation& tr = translations_[batch.producer];
  if (tr.input >= 0) sink->SwitchInput(tr.input);
  if (tr.strings.empty()) tr.strings.push_back(0);
  for (size_t i = 0; i < batch.used; ++i) {
    Op& op = batch.ops[i];
    const IdToken pid{op.a, op.pid_number};
    const IdToken tid{op.b, op.tid_number};
    switch (op.type) {
      case Op::kBeginInput:
        sink->BeginInput(op.a, op.b);
        tr.input = sink->current_input();
        break;
      case Op::kString:
        tr.strings.push_back(sink->Intern(op.a));
        break;
      case Op::kOrigin: {
        absl::StatusOr<int64_t> rel = sink->ToRelativePs(op.number, 0);
        if (rel.ok()) {
          tr.offset_ps = *rel;
          break;
        }
        // Another clock domain (relative vs epoch times): start this input
        // where the first one started, and say so.
        const int64_t first_origin_ns = sink->origin_ns();
        const int64_t shift = first_origin_ns - op.number;
        tr.offset_ps = 0;
        sink->SetInputClockShift(shift);
        sink->Warn(absl::StrCat("input ", tr.input, ": timestamps start ", op.number,
                                " ns, too far from the first input's ", first_origin_ns,
                                " ns to share a table; shifted by ", shift,
                                " ns to start with it"));
        break;
      }
      case Op::kThreadTrack:
        tr.tracks.push_back(sink->ThreadTrack(pid, tid));
        break;
      case Op::kCounterTrack:
        tr.tracks.push_back(sink->CounterTrack(pid, op.b, op.c));
        break;
      case Op::kAsyncTrack:
        tr.tracks.push_back(sink->AsyncTrack(pid, op.b));
        break;
      case Op::kInstantTrack:
        tr.tracks.push_back(sink->InstantTrack(pid, op.b == "g"));
        break;
      case Op::kProcessName:
        sink->SetProcessName(pid, op.b);
        break;
      case Op::kProcessSortIndex:
        sink->SetProcessSortIndex(pid, op.number);
        break;
      case Op::kProcessLabel:
        sink->AddProcessLabel(pid, op.b);
        break;
      case Op::kThreadName:
        sink->SetThreadName(pid, tid, op.c);
        break;
      case Op::kThreadSortIndex:
        sink->SetThreadSortIndex(pid, tid, op.number);
        break;
      case Op::kInputField:
        sink->SetInputField(op.a, op.b);
        break;
      case Op::kSkipped:
        sink->CountSkipped(op.a, static_cast<uint64_t>(op.number));
        break;
      case Op::kWarn:
        sink->Warn(op.a);
        break;
      case Op::kEvent: {
        Event e = op.event;
        e.track = tr.tracks[e.track];
        e.name = tr.strings[e.name];
        e.cat = tr.strings[e.cat];
        e.flow_id = tr.strings[e.flow_id];
        e.flow_in = tr.strings[e.flow_in];
        e.flow_out = tr.strings[e.flow_out];
        const __int128 ts = static_cast<__int128>(e.ts) + tr.offset_ps;
        if (ts > INT64_MAX / 2 || ts < INT64_MIN / 2) {
          return absl::OutOfRangeError("timestamps of the inputs are too far apart for one table");
        }
        e.ts = static_cast<int64_t>(ts);
        e.args_json = op.c;
        if (absl::Status s = sink->Add(e); !s.ok()) return s;
        break;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace tracetable
