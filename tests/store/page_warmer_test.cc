// PageWarmer (store/page_warmer.h): pages ahead of the filler become
// resident (mincore), none past `ahead` of it nor past the end, and the
// contents are never changed. The waits are bounded polls for the idle
// thread's progress, not timings.
#include "store/page_warmer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tracetable {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

class Mapping {
 public:
  explicit Mapping(size_t bytes) : bytes_(bytes) {
    data_ = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    // 4 KiB pages: a huge page would make residency coarser than the checks.
    if (data_ != MAP_FAILED) madvise(data_, bytes, MADV_NOHUGEPAGE);
  }
  ~Mapping() {
    if (data_ != MAP_FAILED) munmap(data_, bytes_);
  }
  char* data() const { return data_; }
  bool ok() const { return data_ != MAP_FAILED; }
  // Resident pages in [from, to).
  size_t Resident(size_t from, size_t to) const {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> v((to - from + page - 1) / page);
    if (mincore(data_ + from, to - from, v.data()) != 0) return SIZE_MAX;
    size_t n = 0;
    for (unsigned char c : v) n += c & 1;
    return n;
  }
  size_t Pages(size_t from, size_t to) const { return (to - from) / static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

 private:
  size_t bytes_;
  char* data_;
};

// Polls until [from, to) is all resident, for at most 20 s.
bool WaitResident(const Mapping& m, size_t from, size_t to) {
  for (int i = 0; i < 2000; ++i) {
    if (m.Resident(from, to) == m.Pages(from, to)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Kernels before 5.14 have no MADV_POPULATE_WRITE: the warmer then does
// nothing, which is its contract, but this test cannot see it work.
bool KernelPopulates() {
  Mapping probe(kMiB);
  return probe.ok() && madvise(probe.data(), 4096, MADV_POPULATE_WRITE) == 0;
}

TEST(PageWarmer, WarmsAheadOfTheFillerAndNoFurther) {
  if (!KernelPopulates()) GTEST_SKIP() << "no MADV_POPULATE_WRITE on this kernel";
  Mapping m(64 * kMiB);
  ASSERT_TRUE(m.ok());
  std::memcpy(m.data(), "kept", 4);  // the first page, written before
  std::memcpy(m.data() + 20 * kMiB, "also kept", 9);
  // Not page-aligned, as a vector's data is not: the warmer rounds in.
  // Ahead by 8 MiB at most, and by half what is filled (at least 2 MiB):
  // nothing filled yet, 2 MiB.
  PageWarmer warmer(m.data() + 100, 64 * kMiB - 100, 8 * kMiB);
  ASSERT_TRUE(WaitResident(m, 0, 2 * kMiB));
  // Give it time to overshoot if it would, then check it did not.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(m.Resident(3 * kMiB, 20 * kMiB), 0u);
  EXPECT_EQ(m.Resident(21 * kMiB, 64 * kMiB), 0u);

  // Fillers report record counts times record sizes: not whole pages.
  warmer.Filled(12 * kMiB + 4000);  // half of it ahead
  ASSERT_TRUE(WaitResident(m, 0, 18 * kMiB));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(m.Resident(19 * kMiB, 20 * kMiB), 0u);
  warmer.Filled(24 * kMiB);  // 8 MiB ahead
  ASSERT_TRUE(WaitResident(m, 0, 32 * kMiB));
  warmer.SetEnd(40 * kMiB);
  warmer.Filled(60 * kMiB);
  ASSERT_TRUE(WaitResident(m, 0, 40 * kMiB));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(m.Resident(42 * kMiB, 64 * kMiB), 0u);
  EXPECT_EQ(std::memcmp(m.data(), "kept", 4), 0);
  EXPECT_EQ(std::memcmp(m.data() + 20 * kMiB, "also kept", 9), 0);
}

TEST(PageWarmer, StopsAtOnceWhenDestroyed) {
  Mapping m(256 * kMiB);
  ASSERT_TRUE(m.ok());
  { PageWarmer warmer(m.data(), 256 * kMiB, 256 * kMiB); }
  const size_t resident = m.Resident(0, 256 * kMiB);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(m.Resident(0, 256 * kMiB), resident);  // nothing after it was destroyed
}

}  // namespace
}  // namespace tracetable
