#include "query/serve/fair_clock.h"

#include <algorithm>

namespace tracetable::serve {

int64_t FairClock::Tag(int64_t cost, int64_t* finish) const {
  const int64_t tag = std::max(*finish, now_.load(std::memory_order_relaxed) - credit_);
  *finish = tag + std::max<int64_t>(1, cost);
  return tag;
}

void FairClock::Started(int64_t tag) {
  int64_t now = now_.load(std::memory_order_relaxed);
  while (tag > now && !now_.compare_exchange_weak(now, tag, std::memory_order_relaxed)) {
  }
}

}  // namespace tracetable::serve
