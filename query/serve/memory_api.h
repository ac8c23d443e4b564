// GET /api/tables/{t}/memory: the memory profile of one table (docs/api.md).
// Parameters: id, host (filters), at_us or peak (breakdown time; peak is the
// default), limit (breakdown rows, default 100, 0 = all), start_us, end_us,
// resolution_us (timeline; default the whole table at ~2000 bins),
// timeline=0 (leave the timeline out), breakdown=0 (leave the breakdowns
// out). Answers
// {"ids":[...],"breakdowns":[...],"timelines":[...]}.
#ifndef TRACETABLE_QUERY_SERVE_MEMORY_API_H_
#define TRACETABLE_QUERY_SERVE_MEMORY_API_H_

#include "query/serve/api.h"
#include "store/table.h"

namespace tracetable::serve {

Reply MemoryReply(const Table& table, const Params& params);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_MEMORY_API_H_
