// PreadEnv: LevelDB's default Env, except that table files are read with
// pread(2) instead of being mapped into memory.
//
// Why: the builder's compactions read back every table file it wrote; mapped,
// those pages count in the ingest's resident set (78 MB at 10M events, growing
// with the table), which --memory-budget is meant to bound. Read with pread,
// they stay in the page cache, where the kernel can drop them. Queries read
// with it too: LevelDB caches only blocks it copied, so a mapped block (any
// block snappy did not shrink: tiles are compressed already) would have its
// checksum verified on every read; copied, once, then served from the cache.
#ifndef TRACETABLE_STORE_PREAD_ENV_H_
#define TRACETABLE_STORE_PREAD_ENV_H_

#include "leveldb/env.h"

namespace tracetable {

// Process-wide; never destroyed (LevelDB Envs must outlive their databases).
leveldb::Env* PreadEnv();

}  // namespace tracetable

#endif  // TRACETABLE_STORE_PREAD_ENV_H_
