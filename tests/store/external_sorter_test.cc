// ExternalSorter (store/external_sorter.h) streams every record once, in
// order, whichever way it compares (a function pointer, an inlined order
// type, a radix key) and whether everything fit in memory (the two-way
// merge) or runs spilled (the heap merge): checked against std::sort of the
// same records.
#include "store/external_sorter.h"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "store/sort_record.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

struct Pair {
  uint32_t a = 0;
  uint32_t b = 0;
};
bool PairLess(const Pair& x, const Pair& y) { return std::tie(x.a, x.b) < std::tie(y.a, y.b); }
struct PairRadix {
  static uint64_t Key(const Pair& p) { return uint64_t{p.a} << 32 | p.b; }
  bool operator()(const Pair& x, const Pair& y) const { return Key(x) < Key(y); }
};
static_assert(sorter_internal::RadixOrder<PairRadix, Pair>);
static_assert(!sorter_internal::RadixOrder<LessFn<PairLess>, Pair>);

// The sorter removes its runs; this removes their folder.
struct ScratchDir {
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
  const fs::path path = fs::temp_directory_path() / ("tt_sorter_" + std::to_string(getpid()));
};

std::string Prefix(const std::string& name) {
  static ScratchDir dir;
  return (dir.path / name).string();
}

// Every record of `sorter`, merged in order.
template <typename Record, typename Less>
std::vector<Record> Drained(ExternalSorter<Record, Less>& sorter) {
  std::vector<Record> out;
  EXPECT_TRUE(sorter.Merge(1 << 20, [&](const Record& r) {
                out.push_back(r);
                return absl::OkStatus();
              }).ok());
  return out;
}

template <typename Record, typename Less>
std::vector<Record> SortedBy(const std::vector<Record>& in, size_t max_records, Less less, int* runs,
                             bool one_thread = false) {
  ExternalSorter<Record, Less> sorter(Prefix("s"), less, max_records);
  if (one_thread) sorter.SortOnCallingThread();
  for (const Record& r : in) EXPECT_TRUE(sorter.Add(r).ok());
  *runs = sorter.runs();
  return Drained(sorter);
}

// Pairs with many repeats (equal keys) and keys that differ only in high or
// only in low bytes, so radix passes are both skipped and taken.
std::vector<Pair> RandomPairs(uint32_t seed, size_t n) {
  std::mt19937 rng(seed);
  std::vector<Pair> v(n);
  for (Pair& p : v) {
    p.a = rng() % 3 == 0 ? rng() % 5 : rng();
    p.b = rng() % 2 ? rng() % 300 : rng();
  }
  return v;
}

bool Same(const std::vector<Pair>& x, const std::vector<Pair>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].a != y[i].a || x[i].b != y[i].b) return false;
  }
  return true;
}

TEST(ExternalSorter, EveryOrderAndMergeGivesTheSortedRecords) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{70000}, size_t{200000}}) {
    const std::vector<Pair> in = RandomPairs(static_cast<uint32_t>(n) + 1, n);
    std::vector<Pair> want = in;
    std::sort(want.begin(), want.end(), PairLess);
    // Fits in memory (two halves, two-way merge, or one sorted whole), then
    // spilled runs.
    for (size_t max_records : {size_t{1} << 20, size_t{4096}, size_t{50000}}) {
      int runs = 0;
      EXPECT_TRUE(Same(want, SortedBy(in, max_records, PairLess, &runs))) << n << " pointer " << max_records;
      EXPECT_TRUE(Same(want, SortedBy(in, max_records, LessFn<PairLess>{}, &runs))) << n << " type " << max_records;
      EXPECT_TRUE(Same(want, SortedBy(in, max_records, PairRadix{}, &runs))) << n << " radix " << max_records;
      EXPECT_TRUE(Same(want, SortedBy(in, max_records, LessFn<PairLess>{}, &runs, true)))
          << n << " type, one thread " << max_records;
      EXPECT_TRUE(Same(want, SortedBy(in, max_records, PairRadix{}, &runs, true)))
          << n << " radix, one thread " << max_records;
      EXPECT_EQ(runs > 0, n > std::max<size_t>(max_records, 1024)) << n << " " << max_records;
    }
  }
}

TEST(ExternalSorter, SortRecordsInTrackTimeOrder) {
  std::mt19937 rng(3);
  std::vector<SortRecord> in(150000);
  for (size_t i = 0; i < in.size(); ++i) {
    in[i].track = rng() % 7;
    in[i].ts = rng() % 1000;
    in[i].dur = rng() % 4;
    in[i].id = i + 1;
  }
  std::vector<SortRecord> want = in;
  std::sort(want.begin(), want.end(), TrackTimeLess);
  for (size_t max_records : {size_t{1} << 20, size_t{9000}}) {
    int runs = 0;
    const std::vector<SortRecord> got = SortedBy(in, max_records, LessFn<TrackTimeLess>{}, &runs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].id, want[i].id) << i << " of " << max_records;
  }
}

// Grouped reading: every group (track) read on its own, from the buffer's
// halves and from spilled runs (one, two and many sources per group, read
// through buffers smaller than a slice), gives that group's records in the
// sorted order, and groups read at once on two threads, last first, give
// the same. A group's count is its records'.
TEST(ExternalSorter, GroupsReadAloneGiveEachTracksRecordsInOrder) {
  std::mt19937 rng(5);
  std::vector<SortRecord> in(120000);
  for (size_t i = 0; i < in.size(); ++i) {
    // Track 0 holds half the records; tracks 1-40 share the rest; track
    // 1000 only appears at the end (in the last run or the buffer).
    in[i].track = i + 300 >= in.size() ? 1000 : rng() % 2 ? 0 : 1 + rng() % 40;
    in[i].ts = rng() % 5000;
    in[i].id = i + 1;
  }
  std::vector<SortRecord> want = in;
  std::sort(want.begin(), want.end(), TrackTimeLess);
  for (size_t max_records : {size_t{1} << 20, size_t{50000}, size_t{7000}}) {
    SCOPED_TRACE(max_records);
    using Sorter = ExternalSorter<SortRecord, TrackTimeOrder>;
    Sorter sorter(Prefix("groups"), TrackTimeOrder{}, max_records);
    for (const SortRecord& r : in) ASSERT_TRUE(sorter.Add(r).ok());
    EXPECT_EQ(sorter.runs() > 0, max_records < in.size());
    absl::StatusOr<std::vector<Sorter::Group>> groups = sorter.SortGroups();
    ASSERT_TRUE(groups.ok()) << groups.status();
    ASSERT_EQ(groups->size(), 42u);
    auto read = [&](const Sorter::Group& g) {
      std::vector<SortRecord> got;
      EXPECT_TRUE(sorter.ReadGroup(g, 1000, [&](absl::Span<const SortRecord> span) {
                          got.insert(got.end(), span.begin(), span.end());
                          return absl::OkStatus();
                        }).ok());
      return got;
    };
    std::vector<std::vector<SortRecord>> by_group(groups->size());
    std::thread other([&] {
      for (size_t i = groups->size(); i-- > groups->size() / 2;) by_group[i] = read((*groups)[i]);
    });
    for (size_t i = 0; i < groups->size() / 2; ++i) by_group[i] = read((*groups)[i]);
    other.join();
    size_t at = 0;
    for (size_t i = 0; i < groups->size(); ++i) {
      EXPECT_EQ(by_group[i].size(), (*groups)[i].records);
      for (const SortRecord& r : by_group[i]) {
        ASSERT_LT(at, want.size());
        EXPECT_EQ(r.track, (*groups)[i].key);
        ASSERT_EQ(r.id, want[at].id) << "record " << at << " of group " << i;
        ++at;
      }
    }
    EXPECT_EQ(at, want.size());
    sorter.Clear();
    EXPECT_EQ(sorter.size(), 0u);
  }
}

// Partitioning by group first (PartitionByGroupFirst, as the table builder's
// sorters do) gives every group's records in the same order as sorting them
// whole: records nearly in time order per track, as traces come, with ties
// in time broken by duration and id across the buffer's parts, and a few
// out of order; with track ids that need one radix pass, two, or more (then
// each part is sorted whole), and with so many small tracks that the
// buffer is sorted in halves after all; in memory and with runs spilled;
// and with each track's first record its last in time.
TEST(ExternalSorter, PartitionedByGroupReadsAsSortedWhole) {
  struct Case {
    const char* name;
    uint32_t tracks;
    uint32_t track_step;  // ids 0, step, 2 step, ...
    size_t max_records;
  };
  for (const Case& c : {Case{"one byte", 40, 1, 1 << 20}, Case{"two bytes", 300, 1, 1 << 20},
                        Case{"wide ids", 5, 40000, 1 << 20}, Case{"small tracks", 30000, 1, 1 << 20},
                        Case{"spilled", 300, 1, 50000}, Case{"late first", 40, 1, 1 << 20}}) {
    SCOPED_TRACE(c.name);
    std::mt19937 rng(7);
    std::vector<SortRecord> in(200000);
    std::vector<int64_t> clock(c.tracks, 0);
    for (size_t i = 0; i < in.size(); ++i) {
      // Blocks of four records per track, its times rising with ties.
      const uint32_t t = static_cast<uint32_t>((i / 4) * 2654435761u % c.tracks);
      in[i].track = t * c.track_step;
      clock[t] += rng() % 3;
      in[i].ts = rng() % 100 == 0 ? clock[t] - static_cast<int64_t>(rng() % 50) : clock[t];
      // "late first": each track's first record is its last in time, so
      // every later one is out of place behind it.
      if (std::string_view(c.name) == "late first" && clock[t] < 3) in[i].ts = int64_t{1} << 40;
      in[i].dur = rng() % 4;
      in[i].id = i + 1;
    }
    std::vector<SortRecord> want = in;
    std::sort(want.begin(), want.end(), TrackTimeLess);
    using Sorter = ExternalSorter<SortRecord, TrackTimeOrder>;
    Sorter sorter(Prefix("partition"), TrackTimeOrder{}, c.max_records);
    sorter.PartitionByGroupFirst();
    for (const SortRecord& r : in) ASSERT_TRUE(sorter.Add(r).ok());
    absl::StatusOr<std::vector<Sorter::Group>> groups = sorter.SortGroups();
    ASSERT_TRUE(groups.ok()) << groups.status();
    size_t at = 0;
    for (const Sorter::Group& g : *groups) {
      uint64_t records = 0;
      ASSERT_TRUE(sorter.ReadGroup(g, 1000, [&](absl::Span<const SortRecord> span) {
                          for (const SortRecord& r : span) {
                            EXPECT_EQ(r.track, g.key);
                            if (at >= want.size() || r.id != want[at].id) {
                              return absl::InternalError(absl::StrCat("record ", at, " differs"));
                            }
                            ++at;
                            ++records;
                          }
                          return absl::OkStatus();
                        }).ok());
      EXPECT_EQ(records, g.records);
    }
    EXPECT_EQ(at, want.size());
  }
}

// A limit lowered while the buffer is part full (TableBuilder charging
// strings to the budget) spills what is over it, and later fills stop at
// the new limit: the merge still gives every record in order. The same
// with the buffer's pages warmed ahead (store/page_warmer.h), whose end the
// lowered limit moves.
TEST(ExternalSorter, LoweredLimitSpillsAndStillSorts) {
  const std::vector<Pair> in = RandomPairs(11, 50000);
  std::vector<Pair> want = in;
  std::sort(want.begin(), want.end(), PairLess);
  for (bool warm : {false, true}) {
    ExternalSorter<Pair, LessFn<PairLess>> sorter(Prefix(warm ? "shrink-warm" : "shrink"), LessFn<PairLess>{}, 20000);
    if (warm) sorter.WarmAhead(16 << 10);
    for (size_t i = 0; i < in.size(); ++i) {
      if (i == 15000) {
        ASSERT_TRUE(sorter.SetMaxRecords(4000).ok());  // below what is buffered: spills
        EXPECT_EQ(sorter.runs(), 1);
      }
      if (i == 30000) {
        ASSERT_TRUE(sorter.SetMaxRecords(100000).ok());  // no higher than reserved
      }
      ASSERT_TRUE(sorter.Add(in[i]).ok());
    }
    EXPECT_EQ(sorter.max_records(), 20000u);
    // One run at the shrink, three fills of 4000 up to 30000, one of 20000.
    EXPECT_EQ(sorter.runs(), 5);
    EXPECT_TRUE(Same(Drained(sorter), want)) << (warm ? "warmed" : "not warmed");
  }
}

// Room reserved up front lets the limit rise later without a spill (the
// memory profile's records borrowing the main sorter's share), up to the
// reservation and no further.
TEST(ExternalSorter, LimitRaisedIntoReservedRoomHoldsMoreWithoutSpilling) {
  const std::vector<Pair> in = RandomPairs(12, 30000);
  std::vector<Pair> want = in;
  std::sort(want.begin(), want.end(), PairLess);
  ExternalSorter<Pair, LessFn<PairLess>> sorter(Prefix("reserve"), LessFn<PairLess>{}, 5000);
  sorter.ReserveUpTo(25000);
  for (size_t i = 0; i < in.size(); ++i) {
    if (sorter.buffered() == sorter.max_records() && sorter.max_records() < 20000) {
      ASSERT_TRUE(sorter.SetMaxRecords(sorter.max_records() + 5000).ok());
    }
    if (i == 22000) {
      ASSERT_TRUE(sorter.SetMaxRecords(1000000).ok());  // stops at the reservation
    }
    ASSERT_TRUE(sorter.Add(in[i]).ok());
  }
  EXPECT_EQ(sorter.max_records(), 25000u);
  EXPECT_EQ(sorter.runs(), 1);  // at 20000, when it was not raised; none while it was
  EXPECT_EQ(sorter.buffered(), 10000u);
  EXPECT_TRUE(Same(Drained(sorter), want));
}

// ReleasePages empties the sorter (records and runs) and keeps it usable;
// ExpectAtMost only limits the warmer, never what may be added.
TEST(ExternalSorter, ReleasedSorterFillsAgainAndExpectAtMostLimitsNoAdds) {
  ExternalSorter<Pair, LessFn<PairLess>> sorter(Prefix("release"), LessFn<PairLess>{}, 4000);
  sorter.WarmAhead(16 << 10);
  for (const Pair& p : RandomPairs(13, 10000)) ASSERT_TRUE(sorter.Add(p).ok());
  ASSERT_EQ(sorter.runs(), 2);
  sorter.ReleasePages();
  EXPECT_EQ(sorter.size(), 0u);
  EXPECT_EQ(sorter.runs(), 0);
  const std::vector<Pair> in = RandomPairs(14, 9000);
  std::vector<Pair> want = in;
  std::sort(want.begin(), want.end(), PairLess);
  for (size_t i = 0; i < in.size(); ++i) {
    if (i == 100) sorter.ExpectAtMost(10);  // wrong by far: more still come
    ASSERT_TRUE(sorter.Add(in[i]).ok());
  }
  EXPECT_TRUE(Same(Drained(sorter), want));
}

}  // namespace
}  // namespace tracetable
