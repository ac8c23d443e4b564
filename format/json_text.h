// Writing JSON text by hand (answers are large and flat; a DOM would double
// their memory), shared by readers that build argument objects and by the
// query engine. Strings are always written as valid UTF-8: invalid bytes
// become U+FFFD, so the output parses whatever the input held.
#ifndef TRACETABLE_FORMAT_JSON_TEXT_H_
#define TRACETABLE_FORMAT_JSON_TEXT_H_

#include <string>
#include <string_view>

namespace tracetable {

bool IsValidUtf8(std::string_view s);

// Appends `s` as a quoted JSON string.
void AppendJsonString(std::string* out, std::string_view s);

// Appends a double; NaN and infinities (not JSON) become null.
void AppendJsonDouble(std::string* out, double v);

// Appends an id the input gave as a number (raw digits) or string (quoted).
void AppendJsonId(std::string* out, std::string_view text, bool is_number);

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_JSON_TEXT_H_
