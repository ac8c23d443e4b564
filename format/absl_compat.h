// Debian 12's abseil is built with its own absl::string_view (not
// std::string_view), so std::string_view does not convert implicitly.
// Av() bridges the two without copying: absl::StrCat("x", Av(sv)).
#ifndef TRACETABLE_FORMAT_ABSL_COMPAT_H_
#define TRACETABLE_FORMAT_ABSL_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace tracetable {

inline absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view Sv(absl::string_view s) { return {s.data(), s.size()}; }

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_ABSL_COMPAT_H_
