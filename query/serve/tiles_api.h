// GET /api/tables/{t}/tile: one map-style tile (query/tiles.h) as the binary
// answer documented in docs/api.md, with a strong ETag (tiles never change
// for the life of a table, so the front serves them as immutable). Bad
// parameters are a JSON 400 naming the parameter, as for the other calls.
#ifndef TRACETABLE_QUERY_SERVE_TILES_API_H_
#define TRACETABLE_QUERY_SERVE_TILES_API_H_

#include "query/serve/api.h"
#include "store/table.h"

namespace tracetable::serve {

Reply TileReply(const Table& table, const Params& params);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_TILES_API_H_
