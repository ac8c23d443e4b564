// Small helpers for writing JSON text by hand (the answers are large and
// flat; a DOM would double their memory).
#ifndef TRACETABLE_QUERY_JSON_TEXT_H_
#define TRACETABLE_QUERY_JSON_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace tracetable {

// Appends `s` as a quoted JSON string.
void AppendJsonString(std::string* out, std::string_view s);

// Appends a double the way JSON needs it (no NaN/inf: those become null).
void AppendJsonDouble(std::string* out, double v);

// Appends an id the input gave as a number (raw digits) or string (quoted).
void AppendJsonId(std::string* out, std::string_view text, bool is_number);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_JSON_TEXT_H_
