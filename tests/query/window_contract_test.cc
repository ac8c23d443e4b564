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
  TempDir dir;
  BuildOptions opts;
  opts.output = dir.Sub("t.tracetable");
  opts.memory_budget = budget;
  auto builder = TableBuilder::Create(opts);
  ASSERT_TRUE(builder.ok()) << builder.status();
  Trace tr = MakeTrace(seed, builder->get());
  ASSERT_TRUE((*builder)->Finish().ok());
  auto table = Table::Open(opts.output);
  ASSERT_TRUE(table.ok()) << table.status();
  ResolveAsyncTracks(**table, &tr);
  const Table& t = **table;
  ASSERT_EQ(t.meta().num_events(), tr.events.size());

  CheckWindowsAgainst(t, tr, seed, 40);
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
  TempDir dir;
  BuildOptions opts;
  opts.output = dir.Sub("t.tracetable");
  auto builder = TableBuilder::Create(opts);
  ASSERT_TRUE(builder.ok());
  Trace tr = MakeTrace(5, builder->get());
  ASSERT_TRUE((*builder)->Finish().ok());
  auto table = Table::Open(opts.output);
  ASSERT_TRUE(table.ok());
  ResolveAsyncTracks(**table, &tr);
  WindowRequest req;
  req.start = (*table)->meta().min_ts();
  req.end = (*table)->meta().max_end();
  req.limit = 10;
  auto res = QueryWindow(**table, req);
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->truncated);
  EXPECT_EQ(res->items.size(), 10u);
  req.limit = 0;
  auto all = QueryWindow(**table, req);
  EXPECT_FALSE(all->truncated);
  EXPECT_EQ(all->items.size(), tr.events.size());
}

}  // namespace
}  // namespace tracetable
