#include "store/pipelined_sink.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/flow_id.h"
#include "format/time.h"
#include "store/shared_strings.h"
#include "store/table_builder.h"

namespace tracetable {
namespace {

using pipeline::Batch;
using pipeline::Op;
using pipeline::OpTexts;

// About 0.46 MB of Ops: small enough that the batches of runs in flight, each
// partly filled, cost little beyond their args.
constexpr size_t kBatchOps = 4096;
// A batch's args are ~0.1–1 MB (gen 1M, Kineto); more is not kept for reuse.
constexpr size_t kKeptArgsBytes = size_t{4} << 20;

// Asks for the cache lines of [p, p + bytes): ops cross between cores, so
// each side fetches ahead what it touches next (for writing, or reading).
template <bool kWrite>
void FetchLines(const void* p, size_t bytes) {
  const char* at = static_cast<const char*>(p);
  for (size_t i = 0; i < bytes; i += 64) __builtin_prefetch(at + i, kWrite);
}

// A producer's flow id as the builder's: numbers are the same everywhere.
uint32_t FlowOf(const std::vector<uint32_t>& builder_strings, uint32_t id) {
  return IsNumericFlowId(id) ? id : builder_strings[id];
}

}  // namespace

ProducerSink::ProducerSink(PipelineQueue* queue, InputClock* clock)
    : queue_(queue), clock_(clock), producer_(queue->NewProducer()),
      batch_(queue->NewBatch(producer_)) {
  strings_.Insert("", 0);
}

ProducerSink::~ProducerSink() {
  Close();
  queue_->strings()->Charge(-static_cast<int64_t>(strings_bytes_));
}

Op& ProducerSink::Push(Op::Type type) {
  if (batch_->used >= kBatchOps) Send();
  if (batch_->used == batch_->ops.size()) batch_->ops.emplace_back();
  Op& op = batch_->ops[batch_->used++];
  // A recycled batch's ops were last read on the building thread's core.
  const size_t n = batch_->ops.size();
  if (batch_->used + 8 < n) FetchLines<true>(&batch_->ops[batch_->used + 8], sizeof(Op));
  op.type = type;
  op.pid_number = op.tid_number = true;
  op.text = Op::kNoText;
  op.number = 0;
  return op;
}

OpTexts& ProducerSink::TextsOf(Op& op) {
  Batch& b = *batch_;
  if (b.texts_used == b.texts.size()) b.texts.emplace_back();
  op.text = static_cast<uint32_t>(b.texts_used);
  OpTexts& t = b.texts[b.texts_used++];
  t.a.clear();
  t.b.clear();
  t.c.clear();
  return t;
}

void ProducerSink::Send() {
  if (batch_->used == 0) return;
  if (slot_ < 0) slot_ = queue_->AddSlot(/*streaming=*/true);
  queue_->Push(slot_, std::move(batch_));
  batch_ = queue_->NewBatch(producer_);
}

void ProducerSink::UseSlot(int slot) {
  EndSlot();
  slot_ = slot;
}

void ProducerSink::EndSlot() {
  Send();
  if (slot_ >= 0) queue_->CloseSlot(slot_);
  slot_ = -1;
}

void ProducerSink::BeginInput(std::string_view path, std::string_view host) {
  OpTexts& t = TextsOf(Push(Op::kBeginInput));
  t.a = path;
  t.b = host;
}

uint32_t ProducerSink::Intern(std::string_view s) {
  if (std::optional<uint32_t> known = strings_.Find(s)) return *known;
  const uint32_t id = next_string_++;
  std::string_view stored;
  const uint32_t shared = queue_->strings()->Intern(s, &stored);
  strings_.Insert(stored, id);
  const size_t bytes = strings_.bytes();
  if (bytes != strings_bytes_) {
    queue_->strings()->Charge(static_cast<int64_t>(bytes) - static_cast<int64_t>(strings_bytes_));
    strings_bytes_ = bytes;
  }
  // The consumer learns ids in order.
  Push(Op::kString).number = shared;
  return id;
}

// Not cached: a map entry per flow id would cost more (a lookup that
// misses, an insert, growth) than the one more op per repeat this costs.
uint32_t ProducerSink::InternId(std::string_view s) {
  if (s.empty()) return 0;
  if (std::optional<uint32_t> n = NumericFlowId(s)) return *n;
  const uint32_t id = next_string_++;
  Push(Op::kString).number = queue_->strings()->Intern(s);
  return id;
}

// The map of a worker holds every name it has seen (68k on the bench trace,
// megabytes): a lookup is a cache miss on its slot, which this starts early.
void ProducerSink::PrefetchIntern(std::string_view s) { strings_.Prefetch(s); }

absl::StatusOr<int64_t> ProducerSink::ToRelativePs(int64_t abs_ns, int32_t sub_ns_ps) {
  if (!clock_->have_origin) {
    clock_->have_origin = true;
    clock_->origin_ns = abs_ns;
    Push(Op::kOrigin).number = abs_ns;
  }
  return RelativePs(abs_ns, sub_ns_ps, clock_->origin_ns);
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
    op.pid_number = pid.is_number;
    op.tid_number = tid.is_number;
    OpTexts& t = TextsOf(op);
    t.a = pid.text;
    t.b = type == Op::kThreadTrack ? tid.text : x;
    t.c = y;
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
  op.pid_number = pid.is_number;
  OpTexts& t = TextsOf(op);
  t.a = pid.text;
  t.b = name;
}

void ProducerSink::SetProcessSortIndex(IdToken pid, int64_t index) {
  Op& op = Push(Op::kProcessSortIndex);
  op.pid_number = pid.is_number;
  op.number = index;
  TextsOf(op).a = pid.text;
}

void ProducerSink::AddProcessLabel(IdToken pid, std::string_view label) {
  Op& op = Push(Op::kProcessLabel);
  op.pid_number = pid.is_number;
  OpTexts& t = TextsOf(op);
  t.a = pid.text;
  t.b = label;
}

void ProducerSink::SetThreadName(IdToken pid, IdToken tid, std::string_view name) {
  Op& op = Push(Op::kThreadName);
  op.pid_number = pid.is_number;
  op.tid_number = tid.is_number;
  OpTexts& t = TextsOf(op);
  t.a = pid.text;
  t.b = tid.text;
  t.c = name;
}

void ProducerSink::SetThreadSortIndex(IdToken pid, IdToken tid, int64_t index) {
  Op& op = Push(Op::kThreadSortIndex);
  op.pid_number = pid.is_number;
  op.tid_number = tid.is_number;
  op.number = index;
  OpTexts& t = TextsOf(op);
  t.a = pid.text;
  t.b = tid.text;
}

void ProducerSink::SetInputField(std::string_view key, std::string_view json) {
  OpTexts& t = TextsOf(Push(Op::kInputField));
  t.a = key;
  t.b = json;
}

absl::Status ProducerSink::Add(const Event& event) {
  if (event.args_json.size() > UINT32_MAX) {
    return absl::InvalidArgumentError("an event's arguments are over 4 GiB of JSON");
  }
  Op& op = Push(Op::kEvent);
  op.event = event;
  op.event.args_json = {};
  op.number = static_cast<int64_t>(batch_->args.size());
  op.text = static_cast<uint32_t>(event.args_json.size());
  batch_->args.append(event.args_json.data(), event.args_json.size());
  // Checked once per batch: a failed consumer stops the reader soon.
  if (batch_->used == 1) return queue_->failure();
  return absl::OkStatus();
}

void ProducerSink::CountSkipped(std::string_view reason, uint64_t n) {
  Op& op = Push(Op::kSkipped);
  op.number = static_cast<int64_t>(n);
  TextsOf(op).a = reason;
}

void ProducerSink::Warn(std::string_view message) { TextsOf(Push(Op::kWarn)).a = message; }

PipelineQueue::PipelineQueue(SharedStrings* strings, size_t max_batches)
    : strings_(strings), max_batches_(max_batches) {}

int PipelineQueue::NewProducer() {
  std::lock_guard<std::mutex> lock(mu_);
  translations_.emplace_back();
  return static_cast<int>(translations_.size()) - 1;
}

int PipelineQueue::AddSlot(bool streaming) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& s = slots_.emplace_back();
  s.streaming = streaming;
  const int slot = first_slot_ + static_cast<int>(slots_.size()) - 1;
  s.discarded = slot >= discard_from_;
  return slot;
}

void PipelineQueue::Push(int slot, std::unique_ptr<Batch> batch) {
  std::unique_lock<std::mutex> lock(mu_);
  Slot* s = &slots_[static_cast<size_t>(slot - first_slot_)];
  if (s->streaming) {
    // Slots before this one are closed or never block, so the consumer
    // always gets to this one and frees room.
    room_.wait(lock, [&] { return queued_ < max_batches_ || !failure_.ok(); });
    s = &slots_[static_cast<size_t>(slot - first_slot_)];
  }
  if (!failure_.ok()) return;  // nobody will read it
  if (s->discarded) {
    KeepForReuse(std::move(batch));
    return;
  }
  s->batches.push_back(std::move(batch));
  ++queued_;
  if (slot == first_slot_) work_.notify_one();  // the builder reads only the front slot
}

void PipelineQueue::CloseSlot(int slot) {
  std::lock_guard<std::mutex> lock(mu_);
  slots_[static_cast<size_t>(slot - first_slot_)].closed = true;
  if (slot == first_slot_) work_.notify_one();
}

void PipelineQueue::DiscardFrom(int slot) {
  std::lock_guard<std::mutex> lock(mu_);
  discard_from_ = std::min(discard_from_, slot);
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (first_slot_ + static_cast<int>(i) < discard_from_ || s.discarded) continue;
    s.discarded = true;
    queued_ -= s.batches.size();
    s.batches.clear();
  }
  work_.notify_one();
  room_.notify_all();
}

void PipelineQueue::EndDiscard() {
  std::lock_guard<std::mutex> lock(mu_);
  discard_from_ = INT_MAX;
}

void PipelineQueue::WaitApplied(int slot) {
  std::unique_lock<std::mutex> lock(mu_);
  applied_.wait(lock, [&] { return first_slot_ > slot || !failure_.ok(); });
}

void PipelineQueue::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  finished_ = true;
  work_.notify_one();
}

void PipelineQueue::KeepForReuse(std::unique_ptr<Batch> batch) {
  if (free_.size() < std::max(max_batches_ + 2, kMaxFreeBatches)) free_.push_back(std::move(batch));
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
  b->texts_used = 0;
  // A batch that carried huge arguments does not keep their room.
  if (b->args.capacity() > kKeptArgsBytes) std::string().swap(b->args);
  b->args.clear();
  return b;
}

void PipelineQueue::Fail(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_.ok()) failure_ = status;
  for (Slot& s : slots_) s.batches.clear();
  queued_ = 0;
  work_.notify_one();
  room_.notify_all();
  applied_.notify_all();
}

absl::Status PipelineQueue::failure() {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

absl::Status PipelineQueue::Drain(TableBuilder* sink) {
  for (;;) {
    std::unique_ptr<Batch> batch;
    Translation* tr = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [&] {
        if (!failure_.ok()) return true;
        if (slots_.empty()) return finished_;
        return !slots_.front().batches.empty() || slots_.front().closed;
      });
      if (!failure_.ok()) {
        // Drop the rest; the reading side stops at its next Add().
        work_.wait(lock, [&] { return finished_; });
        return failure_;
      }
      if (slots_.empty()) return absl::OkStatus();
      Slot& s = slots_.front();
      if (s.batches.empty()) {
        slots_.pop_front();
        ++first_slot_;
        applied_.notify_all();
        continue;
      }
      batch = std::move(s.batches.front());
      s.batches.pop_front();
      if (queued_-- == max_batches_) room_.notify_all();
      tr = &translations_[static_cast<size_t>(batch->producer)];
    }
    if (absl::Status s = Apply(sink, *tr, *batch); !s.ok()) Fail(s);
    std::lock_guard<std::mutex> lock(mu_);
    KeepForReuse(std::move(batch));
  }
}

absl::Status PipelineQueue::Apply(TableBuilder* sink, Translation& tr, Batch& batch) {
  for (size_t i = 0; i < batch.used; ++i) {
    // The ops were written on another core: fetch ahead what the builder
    // reads next, the op itself and the text of its arguments.
    if (i + 16 < batch.used) FetchLines<false>(&batch.ops[i + 16], sizeof(Op));
    if (i + 8 < batch.used) {
      const Op& next = batch.ops[i + 8];
      if (next.type == Op::kEvent) {
        FetchLines<false>(batch.args.data() + next.number, std::min<size_t>(next.text, 256));
        // And the names' ids, in two steps, the second needing the first:
        // an event's name misses the cache in both tables (perf, gen 10M:
        // 3.7% of all CPU on two loads).
        if (next.event.name < tr.strings.size()) __builtin_prefetch(&tr.strings[next.event.name]);
      }
    }
    if (i + 4 < batch.used && batch.ops[i + 4].type == Op::kEvent &&
        batch.ops[i + 4].event.name < tr.strings.size()) {
      sink->PrefetchName(tr.strings[batch.ops[i + 4].event.name]);
    }
    Op& op = batch.ops[i];
    if (op.type == Op::kEvent) {
      if (absl::Status s = ApplyEvent(sink, tr, op, batch.args); !s.ok()) return s;
      continue;
    }
    static const OpTexts kNoTexts;
    const OpTexts& t = op.text == Op::kNoText ? kNoTexts : batch.texts[op.text];
    const IdToken pid{t.a, op.pid_number};
    const IdToken tid{t.b, op.tid_number};
    switch (op.type) {
      case Op::kBeginInput:
        sink->BeginInput(t.a, t.b);
        input_ = sink->current_input();
        offset_ps_ = 0;
        break;
      case Op::kString:
        tr.strings.push_back(sink->InternShared(static_cast<uint32_t>(op.number)));
        break;
      case Op::kOrigin: {
        absl::StatusOr<int64_t> rel = sink->ToRelativePs(op.number, 0);
        if (rel.ok()) {
          offset_ps_ = *rel;
          break;
        }
        // Another clock domain (relative vs epoch times): start this input
        // where the first one started, and say so.
        const int64_t first_origin_ns = sink->origin_ns();
        const int64_t shift = first_origin_ns - op.number;
        offset_ps_ = 0;
        sink->SetInputClockShift(shift);
        sink->Warn(absl::StrCat("input ", input_, ": timestamps start ", op.number,
                                " ns, too far from the first input's ", first_origin_ns,
                                " ns to share a table; shifted by ", shift,
                                " ns to start with it"));
        break;
      }
      case Op::kThreadTrack:
        tr.tracks.push_back(sink->ThreadTrack(pid, tid));
        break;
      case Op::kCounterTrack:
        tr.tracks.push_back(sink->CounterTrack(pid, t.b, t.c));
        break;
      case Op::kAsyncTrack:
        tr.tracks.push_back(sink->AsyncTrack(pid, t.b));
        break;
      case Op::kInstantTrack:
        tr.tracks.push_back(sink->InstantTrack(pid, t.b == "g"));
        break;
      case Op::kProcessName:
        sink->SetProcessName(pid, t.b);
        break;
      case Op::kProcessSortIndex:
        sink->SetProcessSortIndex(pid, op.number);
        break;
      case Op::kProcessLabel:
        sink->AddProcessLabel(pid, t.b);
        break;
      case Op::kThreadName:
        sink->SetThreadName(pid, tid, t.c);
        break;
      case Op::kThreadSortIndex:
        sink->SetThreadSortIndex(pid, tid, op.number);
        break;
      case Op::kInputField:
        sink->SetInputField(t.a, t.b);
        break;
      case Op::kSkipped:
        sink->CountSkipped(t.a, static_cast<uint64_t>(op.number));
        break;
      case Op::kWarn:
        sink->Warn(t.a);
        break;
      case Op::kEvent:
        break;  // above
    }
  }
  return absl::OkStatus();
}

absl::Status PipelineQueue::ApplyEvent(TableBuilder* sink, const Translation& tr, const Op& op,
                                       const std::string& args) {
  Event e = op.event;
  e.track = tr.tracks[e.track];
  e.name = tr.strings[e.name];
  e.cat = tr.strings[e.cat];
  e.flow_id = FlowOf(tr.strings, e.flow_id);
  e.flow_in = FlowOf(tr.strings, e.flow_in);
  e.flow_out = FlowOf(tr.strings, e.flow_out);
  const __int128 ts = static_cast<__int128>(e.ts) + offset_ps_;
  if (ts > INT64_MAX / 2 || ts < INT64_MIN / 2) {
    return absl::OutOfRangeError("timestamps of the inputs are too far apart for one table");
  }
  e.ts = static_cast<int64_t>(ts);
  e.args_json = std::string_view(args.data() + op.number, op.text);
  return sink->Add(e);
}

}  // namespace tracetable
