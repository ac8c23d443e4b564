// Debian 12's abseil is built with its own absl::string_view (not
// std::string_view), so std::string_view does not convert implicitly.
// Av() bridges the two without copying: absl::StrCat("x", Av(sv)).
// TextHash hashes std::string_view keys as abseil hashes its own strings:
// left to absl::Hash, a std::string_view falls back to std::hash, which is
// slower on long texts (Kineto's kernel names run to hundreds of bytes).
#ifndef TRACETABLE_FORMAT_ABSL_COMPAT_H_
#define TRACETABLE_FORMAT_ABSL_COMPAT_H_

#include <string_view>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace tracetable {

inline absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view Sv(absl::string_view s) { return {s.data(), s.size()}; }

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return absl::Hash<absl::string_view>{}(Av(s)); }
};

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_ABSL_COMPAT_H_
