// Names the calling thread (Linux: at most 15 bytes are kept) so that
// /proc/PID/task/*/comm, perf and bench/tools/thread_timeline.py can tell an
// ingest's threads apart. Naming is best effort: a failure changes nothing.
#pragma once

#include <pthread.h>

namespace tracetable {

inline void NameThisThread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace tracetable
