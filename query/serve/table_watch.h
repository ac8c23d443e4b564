// StaleTableReply: what the server answers instead of reading a table whose
// folder was removed or replaced (e.g. `ingest --force` over a served table)
// after the server opened it: a 503 JSON error naming the table, so no answer
// ever comes from files that are no longer on disk. One stat(2) per request.
#ifndef TRACETABLE_QUERY_SERVE_TABLE_WATCH_H_
#define TRACETABLE_QUERY_SERVE_TABLE_WATCH_H_

#include <optional>

#include "query/serve/api.h"
#include "store/table.h"

namespace tracetable::serve {

// nullopt while the table on disk is the one opened.
std::optional<Reply> StaleTableReply(const Table& table);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_TABLE_WATCH_H_
