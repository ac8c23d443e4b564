// Fair shares of the workers across connections (start-time fair queueing
// with a burst credit). Each connection keeps the virtual finish of the work
// it has asked for; a request's tag is max(that finish, now - credit), and the
// finish then grows by the request's cost. `now` is the largest tag a worker
// has started. So a keep-alive client that keeps the server busy gets tags
// ahead of `now` and waits behind a new or quiet client, whose first requests
// come in up to `credit` before everyone queued; nobody waits forever, since
// `now` catches up with every tag in the queue.
//
// Costs are in units of about one cheap call. Thread-safe; a connection's
// finish is its own (touched only by its strand).
#ifndef TRACETABLE_QUERY_SERVE_FAIR_CLOCK_H_
#define TRACETABLE_QUERY_SERVE_FAIR_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <limits>

namespace tracetable::serve {

class FairClock {
 public:
  explicit FairClock(int64_t credit) : credit_(credit) {}

  // A connection's finish before its first request.
  static constexpr int64_t kNew = std::numeric_limits<int64_t>::min() / 2;

  // The tag of a request costing `cost` from the connection whose finish is
  // *finish; advances *finish.
  int64_t Tag(int64_t cost, int64_t* finish) const;
  // A worker starts the task tagged `tag`.
  void Started(int64_t tag);

 private:
  const int64_t credit_;
  std::atomic<int64_t> now_{0};
};

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_FAIR_CLOCK_H_
