// GET /api/tables/{t}/tile: one map-style tile (query/tiles.h) as the binary
// answer documented in docs/api.md, with a strong ETag (tiles never change
// for the life of a table, so the front serves them as immutable). Bad
// parameters are a JSON 400 naming the parameter, as for the other calls.
//
// With a cache, the answer of a coarse tile (of a level that cuts the table
// into at most about 8) made once is kept under its ETag (which names the
// table's identity and the request, so equal keys are equal bytes) and sent
// again from memory: every viewer opening a table asks for the same
// whole-span tiles first, whose windows cost tens of ms each at 100M events.
// Its Server-Timing then says `cache` instead of `query`/`encode`.
#ifndef TRACETABLE_QUERY_SERVE_TILES_API_H_
#define TRACETABLE_QUERY_SERVE_TILES_API_H_

#include "query/serve/answer_cache.h"
#include "query/serve/api.h"
#include "store/table.h"

namespace tracetable::serve {

Reply TileReply(const Table& table, const Params& params, AnswerCache* cache = nullptr);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_TILES_API_H_
