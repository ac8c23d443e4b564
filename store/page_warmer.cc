#include "store/page_warmer.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "store/thread_name.h"

namespace tracetable {
namespace {

constexpr uintptr_t kPage = 4096;
// One huge page: the buffers this warms are advised for them.
constexpr size_t kStep = size_t{2} << 20;
constexpr int kNice = 10;

}  // namespace

PageWarmer::PageWarmer(void* begin, size_t bytes, size_t ahead) : ahead_(ahead) {
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + kPage - 1) & ~(kPage - 1);
  const uintptr_t last = (reinterpret_cast<uintptr_t>(begin) + bytes) & ~(kPage - 1);
  if (last <= first) return;
  begin_ = first;
  end_.store(last - first, std::memory_order_relaxed);
  thread_ = std::thread([this] { Run(); });
}

PageWarmer::~PageWarmer() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void PageWarmer::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  Signal();
}

void PageWarmer::Signal() {
  signal_.fetch_add(1, std::memory_order_release);
  signal_.notify_one();
}

void PageWarmer::Filled(size_t bytes) {
  // Offsets are from the caller's start; the aligned start is at most a
  // page later, which only makes the warmer a page more eager.
  filled_.store(bytes, std::memory_order_relaxed);
  Signal();
}

// No lock: the thread runs at low priority, so a lock it held could keep
// the filler waiting for as long as the cores stay busy.
void PageWarmer::SetEnd(size_t bytes) {
  const size_t end = bytes & ~(kPage - 1);
  size_t old = end_.load(std::memory_order_relaxed);
  while (end < old && !end_.compare_exchange_weak(old, end, std::memory_order_relaxed)) {
  }
}

void PageWarmer::Run() {
  NameThisThread("tt-warm");
  // Nice 10 (about a tenth of a normal thread's share), not SCHED_IDLE: a
  // fault holds the address space's lock, and an idle-class thread
  // preempted there could keep every thread that maps memory waiting as
  // long as the cores stay busy. The work is the filler's own otherwise.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kNice);  // this thread only; a failure leaves it as it is
  size_t warmed = 0;
  for (;;) {
    const uint32_t seen = signal_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) return;
    // Whole pages: madvise needs an aligned start for the next step. No
    // further ahead than half what is filled (at least a step): a buffer
    // that stops filling early was warmed past its end for nothing (gen 1M:
    // 48 MB filled, 110 MB faulted in).
    const size_t filled = filled_.load(std::memory_order_relaxed);
    const size_t ahead = std::min(ahead_, std::max(kStep, filled / 2));
    const size_t target = std::min((filled + ahead) & ~(kPage - 1), end_.load(std::memory_order_relaxed));
    if (warmed >= target) {
      signal_.wait(seen, std::memory_order_acquire);
      continue;
    }
    const size_t n = std::min(kStep, target - warmed);
    if (madvise(reinterpret_cast<void*>(begin_ + warmed), n, MADV_POPULATE_WRITE) != 0) return;
    warmed += n;
  }
}

}  // namespace tracetable
