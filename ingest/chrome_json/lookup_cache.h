// Small direct-mapped caches in front of the sink's Intern and ThreadTrack.
// Traces repeat a few hundred names and threads millions of times; a hit
// costs one short compare instead of a hash-map lookup (and a string copy)
// in the sink. A miss or a collision just asks the sink, so results are
// always the sink's own answers.
#ifndef TRACETABLE_INGEST_CHROME_JSON_LOOKUP_CACHE_H_
#define TRACETABLE_INGEST_CHROME_JSON_LOOKUP_CACHE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "format/same_text.h"
#include "store/event_sink.h"

namespace tracetable::chrome_json {

// A cheap position-sampling hash: good enough to spread names over slots.
inline size_t CheapHash(std::string_view s, size_t seed = 0) {
  size_t h = s.size() * 0x9e3779b97f4a7c15ULL + seed;
  if (!s.empty()) {
    h ^= static_cast<unsigned char>(s.front()) * 0x100000001b3ULL;
    h ^= static_cast<unsigned char>(s.back()) << 7;
    h ^= static_cast<unsigned char>(s[s.size() / 2]) << 14;
    h ^= static_cast<unsigned char>(s[s.size() / 3]) << 21;
  }
  return h ^ (h >> 29);
}

class InternCache {
 public:
  explicit InternCache(EventSink* sink) : sink_(sink) {}
  uint32_t Intern(std::string_view s) {
    if (s.empty()) return 0;
    Slot& slot = slots_[CheapHash(s) % kSlots];
    if (slot.used && SameText(slot.key, s)) return slot.id;
    slot.id = sink_->Intern(s);
    slot.key.assign(s);
    slot.used = true;
    return slot.id;
  }
  // Fetches the slot Intern(s) will read and passes the hint on, without
  // reading the slot to see whether the sink is needed: that read missed
  // the cache, and the names that miss here (most, on traces of 65k names)
  // then met the sink unprefetched if the slot changed in between. gen 10M:
  // HintNextName 650 -> 370 samples, the sink's lookups fewer; Kineto 3M:
  // hints 140 -> 90 (perf, 3 runs each).
  void Prefetch(std::string_view s) {
    __builtin_prefetch(&slots_[CheapHash(s) % kSlots]);
    sink_->PrefetchIntern(s);
  }

 private:
  static constexpr size_t kSlots = 1024;
  struct Slot {
    std::string key;
    uint32_t id = 0;
    bool used = false;
  };
  EventSink* sink_;
  std::array<Slot, kSlots> slots_;
};

class ThreadTrackCache {
 public:
  explicit ThreadTrackCache(EventSink* sink) : sink_(sink) {}
  uint32_t Track(IdToken pid, IdToken tid) {
    // Runs of events on one thread are the common case: check the last hit
    // before hashing.
    if (last_ != nullptr && last_->Matches(pid, tid)) return last_->id;
    size_t h = CheapHash(pid.text, pid.is_number) * 31 + CheapHash(tid.text, tid.is_number);
    Slot& slot = slots_[(h ^ (h >> 17)) % kSlots];
    last_ = &slot;
    if (slot.Matches(pid, tid)) return slot.id;
    slot.id = sink_->ThreadTrack(pid, tid);
    slot.pid.assign(pid.text);
    slot.tid.assign(tid.text);
    slot.pid_num = pid.is_number;
    slot.tid_num = tid.is_number;
    slot.used = true;
    return slot.id;
  }

 private:
  static constexpr size_t kSlots = 256;
  struct Slot {
    bool Matches(IdToken p, IdToken t) const {
      return used && pid_num == p.is_number && tid_num == t.is_number &&
             SameText(pid, p.text) && SameText(tid, t.text);
    }
    std::string pid, tid;
    bool pid_num = false, tid_num = false, used = false;
    uint32_t id = 0;
  };
  EventSink* sink_;
  std::array<Slot, kSlots> slots_;
  const Slot* last_ = nullptr;
};

}  // namespace tracetable::chrome_json

#endif  // TRACETABLE_INGEST_CHROME_JSON_LOOKUP_CACHE_H_
