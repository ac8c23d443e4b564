// CorruptTable: the one error every reader returns for a table whose files
// contradict themselves (bad checksums, impossible counts, missing files).
// Callers print it as is; the server maps DataLoss to a 500 JSON error.
#ifndef TRACETABLE_STORE_CORRUPTION_H_
#define TRACETABLE_STORE_CORRUPTION_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"

namespace tracetable {

inline absl::Status CorruptTable(std::string_view path, std::string_view detail) {
  return absl::DataLossError(absl::StrCat("corrupt table ", Av(path), ": ", Av(detail)));
}

}  // namespace tracetable

#endif  // TRACETABLE_STORE_CORRUPTION_H_
