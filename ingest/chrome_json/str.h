// String concatenation that accepts std::string_view. This abseil build has
// ABSL_OPTION_USE_STD_STRING_VIEW=0, so absl::StrCat cannot take the
// std::string_view the sink interface uses; Cat/CatTo convert each piece.
#ifndef TRACETABLE_INGEST_CHROME_JSON_STR_H_
#define TRACETABLE_INGEST_CHROME_JSON_STR_H_

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tracetable::chrome_json {
namespace str_internal {

inline absl::string_view Piece(std::string_view s) { return {s.data(), s.size()}; }
inline absl::string_view Piece(const std::string& s) { return {s.data(), s.size()}; }
inline absl::string_view Piece(const char* s) { return s; }
template <typename T>
  requires(std::is_same_v<T, absl::string_view> &&
           !std::is_same_v<absl::string_view, std::string_view>)
inline absl::string_view Piece(const T& s) {
  return s;
}
template <typename T>
  requires std::is_arithmetic_v<T>
inline std::string Piece(T v) {
  return absl::StrCat(v);
}

}  // namespace str_internal

template <typename... Args>
std::string Cat(const Args&... args) {
  return absl::StrCat(str_internal::Piece(args)...);
}

template <typename... Args>
void CatTo(std::string* out, const Args&... args) {
  absl::StrAppend(out, str_internal::Piece(args)...);
}

inline absl::string_view AbslView(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace tracetable::chrome_json

#endif  // TRACETABLE_INGEST_CHROME_JSON_STR_H_
