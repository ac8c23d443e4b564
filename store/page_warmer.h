// PageWarmer: faults in the pages of a buffer a little ahead of the thread
// that fills it, on a low-priority thread that mostly runs when a core would
// otherwise idle.
//
// Why: a page first touched costs the toucher a fault and a clear, and on a
// VM a host fault too (this one: 2–4.5 s of CPU per GB). The main sorter's
// buffer (48 bytes an event, 605 MB for Kineto 10M) is the ingest's largest
// fresh memory, and the thread that fills it — the building thread while
// reading, then the memory profile's derivation — is on the critical path,
// while the other core idles part of the time (reading Kineto: 1.7 of 2 busy;
// deriving: 1 of 2). Faulting the pages there instead takes the cost off
// that path: Kineto 10M reading 6.39 -> 5.66 s, deriving the memory profile
// 0.80 -> 0.52 s (medians of 4 interleaved; docs/performance.md, s34).
//
// Contract:
//  - Warms [begin, begin + bytes) in order, at most `ahead` bytes (and at
//    most half the filled bytes, or 2 MiB) past the position last given to
//    Filled(), never past the end. SetEnd lowers the
//    end without waiting for the thread (which may be starved: see below):
//    a step already under way may still fault in up to 2 MiB past it.
//  - Never writes the contents: pages are faulted in with
//    MADV_POPULATE_WRITE (Linux 5.14+; where it fails the warmer stops).
//  - Filled() costs the filler an atomic store and a wake-up; call it every
//    few MiB. Stop() has the thread stop after the step under way, without
//    waiting for it; the destructor stops it and waits.
//  - The thread runs at nice 10: when every core is busy it gets little
//    time and the filler faults most pages itself, as without a warmer.
#ifndef TRACETABLE_STORE_PAGE_WARMER_H_
#define TRACETABLE_STORE_PAGE_WARMER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>

namespace tracetable {

class PageWarmer {
 public:
  PageWarmer(void* begin, size_t bytes, size_t ahead);
  ~PageWarmer();
  PageWarmer(const PageWarmer&) = delete;
  PageWarmer& operator=(const PageWarmer&) = delete;

  // The filler has written `bytes` from the start of the buffer.
  void Filled(size_t bytes);
  void SetEnd(size_t bytes);
  void Stop();

 private:
  void Run();
  void Signal();

  uintptr_t begin_ = 0;  // page-aligned
  size_t ahead_;
  std::atomic<size_t> filled_{0};
  std::atomic<size_t> end_{0};
  std::atomic<bool> stop_{false};
  std::atomic<uint32_t> signal_{0};  // bumped on every change; the thread waits on it
  std::thread thread_;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_PAGE_WARMER_H_
