// ReopenChangedRun: a served run whose manifest was replaced (a host added
// or replaced with `ingest --shard-of`, `ingest --regrid`) is opened again
// so the server answers from the run as it now is, instead of 503. The
// server swaps the new table in for new requests; requests in flight keep
// the one they started with (it stays open until they are done). A run
// replaced whole (`ingest --force`) is reopened the same way; a table that
// is not a run, or a run removed, keeps answering 503
// (query/serve/table_watch.h).
#ifndef TRACETABLE_QUERY_SERVE_RUN_RELOAD_H_
#define TRACETABLE_QUERY_SERVE_RUN_RELOAD_H_

#include <memory>

#include "absl/status/statusor.h"
#include "store/table.h"

namespace tracetable::serve {

// The run `table` reopened when its manifest changed since it was opened;
// FailedPrecondition when there is nothing to reopen (unchanged, not a run,
// or no run at its path any more); the open's error when the changed run
// does not open.
absl::StatusOr<std::unique_ptr<Table>> ReopenChangedRun(const Table& table, const Table::Options& options);

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_RUN_RELOAD_H_
