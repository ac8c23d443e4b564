// GET /api/tables/{t}/flow: every end of one flow id (query/flow_ends.h), so
// a viewer can draw and follow an arrow whose far end it has not loaded.
// Parameters: id (the flow or bind id as in the trace) or sid (its string id,
// as tiles give it; no scan of the string table). docs/api.md has the answer.
#ifndef TRACETABLE_QUERY_SERVE_FLOW_API_H_
#define TRACETABLE_QUERY_SERVE_FLOW_API_H_

#include "query/serve/api.h"
#include "store/table.h"

namespace tracetable::serve {

Reply FlowReply(const Table& table, const Params& params);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_FLOW_API_H_
