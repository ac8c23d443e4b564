#include "query/serve/run_reload.h"

#include "absl/strings/str_cat.h"
#include "store/run_manifest.h"

namespace tracetable::serve {

absl::StatusOr<std::unique_ptr<Table>> ReopenChangedRun(const Table& table, const Table::Options& options) {
  if (table.run() == nullptr || table.CheckStillOnDisk().ok() || !IsRun(table.path())) {
    return absl::FailedPreconditionError(absl::StrCat(table.path(), ": not a changed run"));
  }
  return Table::Open(table.path(), options);
}

}  // namespace tracetable::serve
