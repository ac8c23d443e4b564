// The global budget for answer bytes in flight (`serve --max-answer-mb`):
// memory an answer holds from the moment it is produced until its last byte
// is handed to the socket (a whole body, or a streamed answer's query result
// plus the chunk being sent), and the working set reserved ahead by heavy
// calls. A reservation that could never fit is kTooLarge (the front answers
// 413); one that does not fit now may wait (until a deadline) for others to
// be returned, then is kBusy (503, try again). An accepted one is returned
// when its Reservation is destroyed. Thread-safe.
#ifndef TRACETABLE_QUERY_SERVE_ANSWER_BUDGET_H_
#define TRACETABLE_QUERY_SERVE_ANSWER_BUDGET_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace tracetable::serve {

class AnswerBudget {
 public:
  explicit AnswerBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}

  enum class Verdict { kOk, kBusy, kTooLarge };

  // Holds `bytes` of the budget until destroyed. Grow() may change the
  // amount later (a streamed answer learns its size only after its query).
  class Reservation {
   public:
    Reservation(AnswerBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    ~Reservation();
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    // Holds `bytes` instead of the current amount, if that fits by `until`
    // (shrinking always does at once).
    Verdict Resize(uint64_t bytes, std::chrono::steady_clock::time_point until = {});
    uint64_t bytes() const { return bytes_; }

   private:
    AnswerBudget* budget_;
    uint64_t bytes_;
  };

  // Waits until `until` (default: not at all) for room.
  Verdict Reserve(uint64_t bytes, std::unique_ptr<Reservation>* out,
                  std::chrono::steady_clock::time_point until = {});
  uint64_t limit() const { return limit_; }
  uint64_t in_use() const;

 private:
  Verdict Change(uint64_t from, uint64_t to, std::chrono::steady_clock::time_point until);

  const uint64_t limit_;
  mutable std::mutex mu_;
  std::condition_variable freed_;
  uint64_t used_ = 0;
};

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_ANSWER_BUDGET_H_
