// Byte-level JSON helpers that work on partial input, for the parts simdjson
// cannot do in a stream:
//  - ScanValue finds where one JSON value ends (tracking strings, escapes and
//    bracket depth only) so each event can be handed to simdjson on its own.
//    It is resumable: feed it consecutive pieces of the same value.
//  - FindJsonSyntaxError checks that a text is a valid JSON value, or a valid
//    *prefix* of one (text cut at the end of a file), and locates the first
//    syntax error. It tells a truncated event (fine) from a syntax error that
//    merely looks like an unclosed value (an error), and it gives exact
//    offsets for messages when simdjson rejects an event.
//  - FindInvalidUtf8 locates the first byte that is not valid UTF-8.
#ifndef TRACETABLE_INGEST_CHROME_JSON_JSON_SCAN_H_
#define TRACETABLE_INGEST_CHROME_JSON_JSON_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tracetable::chrome_json {

// State of a scan over one value. Start with a default state at the value's
// first byte (not whitespace).
struct ScanState {
  uint32_t depth = 0;
  bool started = false;
  bool scalar = false;     // a number or literal: ends at a delimiter
  bool in_string = false;
  bool escape = false;     // the previous byte was a backslash in a string
  bool done = false;       // the value ended
};

// Consumes bytes of p[0, n) that belong to the value; returns how many. When
// the value ends inside p, sets st.done and the count includes its last byte
// (a scalar ends before the delimiter that follows it). Otherwise returns n
// and the next call continues where this one stopped.
size_t ScanValue(ScanState& st, const char* p, size_t n);

// For text that continues a JSON array (p at the start of an element):
// the length up to and including the closing bracket of the last element
// that ends within p[0, n) with '}' or ']', stopping early at the array's
// own ']'. 0 when no element ends in the text. Lets the reader hand a whole
// run of events to simdjson at once.
// Uses the fastest instruction set the CPU has.
size_t ScanCompleteElements(const char* p, size_t n);

// The same with a given instruction set, for tests that compare them: a
// byte at a time (portable), SSE2 and AVX2 with PCLMUL, each only where
// ScanIsaSupported says so.
enum class ScanIsa { kBytes, kSse2, kAvx2 };
bool ScanIsaSupported(ScanIsa isa);
size_t ScanCompleteElementsWith(ScanIsa isa, const char* p, size_t n);

struct SyntaxError {
  size_t offset = 0;      // into the text
  std::string expected;   // "',' or '}'"
  std::string got;        // "'x'", "end of file"
};

enum class PrefixMode {
  kComplete,     // the text must be exactly one whole value
  kPrefixOk,     // the text may stop anywhere (it was cut at end of file)
};

// Returns the first syntax error of `text` read as one JSON value (leading
// and trailing whitespace allowed), or nullopt if there is none.
std::optional<SyntaxError> FindJsonSyntaxError(std::string_view text,
                                               PrefixMode mode);

// Offset of the first byte of `text` that breaks UTF-8, or text.size().
size_t FindInvalidUtf8(std::string_view text);

// JSON whitespace.
inline bool IsJsonSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

}  // namespace tracetable::chrome_json

#endif  // TRACETABLE_INGEST_CHROME_JSON_JSON_SCAN_H_
