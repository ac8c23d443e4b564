#include "query/serve/table_watch.h"

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"

namespace tracetable::serve {

std::optional<Reply> StaleTableReply(const Table& table) {
  absl::Status s = table.CheckStillOnDisk();
  if (s.ok()) return std::nullopt;
  return ErrorReply(503, Sv(absl::StrCat(s.message(), "; restart serve to read it")));
}

}  // namespace tracetable::serve
