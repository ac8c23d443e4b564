// The window contract (query/window.h) checked against a brute-force
// reference on randomized traces: every visible event exactly, every short
// event in a group whose count is exact, counters' first/min/max/last per
// bin, and the size bound.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <tuple>

#include "format/lane_layout.h"
#include "format/levels.h"
#include "gtest/gtest.h"
#include "query/window.h"
#include "store/table_builder.h"
#include "tests/query/random_trace.h"
#include "tests/query/window_reference.h"

namespace tracetable {
namespace {

using namespace tracetable::testing;

void CheckWindows(uint32_t seed, uint64_t budget) {
  RandomTable random;
  ASSERT_TRUE(random.Build(seed, budget));
  ASSERT_EQ(random.table->meta().num_events(), random.trace.events.size());
  CheckWindowsAgainst(*random.table, random.trace, seed, 40);
}

TEST(WindowContract, RandomTraces) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    CheckWindows(seed, 1ull << 30);
  }
}

TEST(WindowContract, TinyMemoryBudgetSpills) {
  // 64 KiB of records: every trace spills dozens of sorted runs.
  for (uint32_t seed = 20; seed <= 23; ++seed) {
    SCOPED_TRACE(seed);
    CheckWindows(seed, 64 << 10);
  }
}

TEST(WindowContract, LimitTruncatesAndSaysSo) {
  RandomTable random;
  ASSERT_TRUE(random.Build(5));
  const Table& table = *random.table;
  WindowRequest req;
  req.start = table.meta().min_ts();
  req.end = table.meta().max_end();
  req.limit = 10;
  auto res = QueryWindow(table, req);
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->truncated);
  EXPECT_EQ(res->items.size(), 10u);
  req.limit = 0;
  auto all = QueryWindow(table, req);
  EXPECT_FALSE(all->truncated);
  EXPECT_EQ(all->items.size(), random.trace.events.size());
}

}  // namespace
}  // namespace tracetable
