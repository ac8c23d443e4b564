// Finished answers of heavy windows, kept to be sent again as they are (an
// answer is bytes on the wire: gzip-compressed or not, part of its key). A
// table never changes while served (a changed one is refused before the
// cache is asked), and the costliest calls repeat: every viewer opening a
// table asks for the same whole-span overview first, which costs a third of
// a second of CPU at 3M events and ~nothing from here.
//
// Identical requests arriving together make the answer once: the first
// leads (Lead() returns a flight, held until its answer is kept or has
// failed), the others wait for the flight to end and then ask again.
//
// Memory: the cache holds its bytes from the answer budget (answer_budget.h)
// and keeps at most `capacity` of them, least recently used out first; an
// answer that finds no room in the budget is not kept. Thread-safe.
#ifndef TRACETABLE_QUERY_SERVE_ANSWER_CACHE_H_
#define TRACETABLE_QUERY_SERVE_ANSWER_CACHE_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "query/serve/answer_budget.h"

namespace tracetable::serve {

class AnswerCache {
 public:
  AnswerCache(AnswerBudget* budget, uint64_t capacity) : budget_(budget), capacity_(capacity) {}

  // Answers larger than this are never kept (a quarter of the capacity).
  uint64_t max_answer_bytes() const { return capacity_ / 4; }
  // The body kept for `key`, or null.
  std::shared_ptr<const std::string> Find(const std::string& key);
  // Keeps `body` for `key` when it fits (see above).
  void Put(const std::string& key, std::string body);
  // Non-null (the flight: hold it while making the answer) when no answer
  // for `key` is being made; else `done` is called once the one being made
  // is kept or has failed (on the thread that ends it).
  std::shared_ptr<void> Lead(const std::string& key, std::function<void()> done);

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const std::string> body;
    std::unique_ptr<AnswerBudget::Reservation> hold;
  };

  AnswerBudget* budget_;
  const uint64_t capacity_;
  std::mutex mu_;
  uint64_t bytes_ = 0;
  std::list<Entry> lru_;  // most recent first
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> index_;
  absl::flat_hash_map<std::string, std::vector<std::function<void()>>> flights_;  // waiters
};

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_ANSWER_CACHE_H_
