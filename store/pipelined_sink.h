// Pipelined ingest: readers run on their own threads and hand their sink calls
// in batches to one consumer that applies them to the real sink (the table
// builder), so parsing and building use different cores, and one input's
// events can be parsed on several threads at once.
//
// Each ProducerSink answers Intern, track and time calls itself, with ids
// local to that producer, and records every call in order; the consumer
// (Drain) translates local ids to the builder's and replays the calls.
// Translation is an array lookup per id. A string new to a producer is
// interned, by that producer's thread, into the builder's SharedStrings; the
// consumer gets its shared id, never its text, and gives it the builder's
// id with an array lookup (TableBuilder::InternShared).
//
// Order: a producer's batches go into slots, and Drain applies slots in the
// order they were added (AddSlot), whichever thread fills them and whenever
// they fill. A producer that is handed no slot (UseSlot) adds one itself
// when it first sends, so a lone reader needs no slot bookkeeping. Replaying
// in slot order makes the table the same as if one thread had made every
// call, in that order: strings and tracks the builder has not seen are
// created at their first use in slot order.
//
// Contract:
//  - A ProducerSink is used by one thread at a time; Drain by one consumer.
//  - Producers of one input share an InputClock: the first time any of them
//    converts is the input's origin (recorded in that producer's slot, which
//    must come first among the input's timed events).
//  - Every slot is closed (EndSlot, Close) and the reading side calls
//    Finish() once no slot will be added; Drain returns after the last slot.
//  - DiscardFrom(slot) drops that slot and every later one until EndDiscard:
//    their batches are never applied (a parallel reader's speculation that
//    turned out wrong).
//  - If the consumer fails (e.g. spilling failed), producers' Add() returns
//    that error from then on, so readers stop.
//  - Memory: a slot added by a producer itself (a streaming reader) blocks
//    its sender while `max_batches` batches wait; slots handed out with
//    UseSlot never block (their owner bounds how many are in flight, see
//    WaitApplied).
#ifndef TRACETABLE_STORE_PIPELINED_SINK_H_
#define TRACETABLE_STORE_PIPELINED_SINK_H_

#include <climits>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "format/absl_compat.h"
#include "store/event_sink.h"
#include "store/string_id_map.h"

namespace tracetable {

class SharedStrings;
class TableBuilder;

namespace pipeline {

// One recorded sink call. The builder reads every op from memory another
// core wrote, so ops hold no texts: the calls that have some (rare) keep
// them in the batch's `texts`, events their args in the batch's `args`.
// 112 bytes (208 with three strings in each: twice gen 1M's input bytes
// crossed between cores).
struct Op {
  enum Type : uint8_t {
    kBeginInput, kString, kThreadTrack, kCounterTrack, kAsyncTrack, kInstantTrack, kProcessName,
    kProcessSortIndex, kProcessLabel, kThreadName, kThreadSortIndex, kInputField,
    kEvent, kSkipped, kWarn, kOrigin,
  };  // kString: `number` is the string's shared id (store/shared_strings.h)
  Type type = kEvent;
  bool pid_number = true, tid_number = true;
  // kEvent: the length of its args JSON, from `number` in Batch::args;
  // a call with texts: their index in Batch::texts; else kNoText.
  static constexpr uint32_t kNoText = UINT32_MAX;
  uint32_t text = kNoText;
  int64_t number = 0;  // sort index, skip count, origin ns; kEvent: see `text`
  Event event;         // kEvent: ids local; args_json empty (see `text`)
};

struct OpTexts {
  std::string a, b, c;  // pid, tid, names, keys, JSON
};

// Batches are recycled with their texts and args, so those keep their
// capacity: filling a batch allocates nothing once warm.
struct Batch {
  int producer = 0;
  size_t used = 0;  // ops[0, used) are this batch's calls
  std::vector<Op> ops;
  size_t texts_used = 0;  // texts[0, texts_used) belong to them
  std::vector<OpTexts> texts;
  std::string args;  // the events' args JSON, one after another
};

}  // namespace pipeline

// The origin of one input's times, shared by the producers of that input.
struct InputClock {
  bool have_origin = false;
  int64_t origin_ns = 0;
};

class PipelineQueue;

class ProducerSink : public EventSink {
 public:
  ProducerSink(PipelineQueue* queue, InputClock* clock);
  ~ProducerSink() override;

  void BeginInput(std::string_view path, std::string_view host) override;
  uint32_t Intern(std::string_view s) override;
  uint32_t InternId(std::string_view s) override;
  void PrefetchIntern(std::string_view s) override;
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

  // Calls from now on go to `slot` (from PipelineQueue::AddSlot).
  void UseSlot(int slot);
  // Sends what is buffered and closes the current slot; later calls go to a
  // new slot.
  void EndSlot();
  // EndSlot, when the reader is done (ok or not).
  void Close() { EndSlot(); }

 private:
  pipeline::Op& Push(pipeline::Op::Type type);
  uint32_t Track(pipeline::Op::Type type, IdToken pid, std::string_view x, IdToken tid,
                 std::string_view y);
  // Texts for `op`, the op just pushed, empty.
  pipeline::OpTexts& TextsOf(pipeline::Op& op);
  void Send();

  PipelineQueue* queue_;
  InputClock* clock_;
  int producer_;
  int slot_ = -1;
  std::unique_ptr<pipeline::Batch> batch_;
  // Long keys view the shared table's copies (store/shared_strings.h), so
  // such a text is held once however many producers know it; the map's
  // bytes are charged to the shared table (see its bytes()).
  StringIdMap strings_;
  size_t strings_bytes_ = 0;  // last charged size of strings_
  uint32_t next_string_ = 1;  // this producer's next string id ("" is 0)
  absl::flat_hash_map<std::string, uint32_t> tracks_;
  uint32_t next_track_ = 0;
};

class PipelineQueue {
 public:
  // `strings`: the builder's (TableBuilder::shared_strings), which Drain
  // will be given.
  explicit PipelineQueue(SharedStrings* strings, size_t max_batches = 8);
  SharedStrings* strings() const { return strings_; }

  // Applies every slot's calls to `sink`, in slot order, until Finish() was
  // called and every slot is applied. Returns the first failure (the
  // producers then see it from Add()).
  absl::Status Drain(TableBuilder* sink);

  // Producer side.
  int NewProducer();
  // A new slot after every slot added so far. `streaming`: its sender may
  // block (see the header comment).
  int AddSlot(bool streaming);
  void Push(int slot, std::unique_ptr<pipeline::Batch> batch);
  void CloseSlot(int slot);
  std::unique_ptr<pipeline::Batch> NewBatch(int producer);
  void DiscardFrom(int slot);
  void EndDiscard();
  // Waits until `slot` was applied or dropped (or the queue failed).
  void WaitApplied(int slot);
  // No more slots will be added.
  void Finish();
  absl::Status failure();
  // Stops everything: producers see `status` from Add(), Drain returns it.
  void Fail(const absl::Status& status);

 private:
  struct Translation {
    std::vector<uint32_t> strings{0};
    std::vector<uint32_t> tracks;
  };
  absl::Status Apply(TableBuilder* sink, Translation& tr, pipeline::Batch& batch);
  absl::Status ApplyEvent(TableBuilder* sink, const Translation& tr, const pipeline::Op& op,
                          const std::string& args);

  struct Slot {
    std::deque<std::unique_ptr<pipeline::Batch>> batches;
    bool streaming = false;
    bool closed = false;
    bool discarded = false;
  };
  SharedStrings* strings_;
  std::mutex mu_;
  // One per kind of waiter, so that each wakes only for what it waits for
  // (one for all woke the reader ~4 times per run it waited for, gen 1M:
  // each futex wake and sleep again costs both cores on a VM).
  std::condition_variable work_;     // the builder: a batch or a close in the front slot, finish, failure
  std::condition_variable room_;     // streaming producers: queued_ fell below max_batches_, failure
  std::condition_variable applied_;  // WaitApplied: first_slot_ moved on, failure
  std::deque<Slot> slots_;           // slots_[0] is slot first_slot_
  int first_slot_ = 0;
  size_t queued_ = 0;                // batches waiting in all slots
  // Applied batches, for producers to fill again. Parallel runs queue
  // without waiting (up to ~8 runs of ~3 batches), so a list capped at
  // max_batches_ + 2 freed most of them and the producers allocated new
  // ones (832 KB of ops each then: gen 10M made 170, each page cleared by
  // the kernel).
  static constexpr size_t kMaxFreeBatches = 64;
  // Keeps an applied or discarded batch for reuse, within the cap. Needs mu_.
  void KeepForReuse(std::unique_ptr<pipeline::Batch> batch);
  std::vector<std::unique_ptr<pipeline::Batch>> free_;
  size_t max_batches_;
  int discard_from_ = INT_MAX;
  bool finished_ = false;
  absl::Status failure_;
  // Producer side: producers' translations are created under mu_, used
  // only by the consumer.
  std::deque<Translation> translations_;
  // Consumer side: the input being applied.
  int64_t offset_ps_ = 0;  // input relative time -> table relative time
  int input_ = -1;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_PIPELINED_SINK_H_
