#include "ingest/chrome_json/input_error.h"

#include "ingest/chrome_json/str.h"
#include "absl/strings/str_format.h"

namespace tracetable::chrome_json {

std::string InputErrorContext::At(uint64_t offset,
                                  std::string_view message) const {
  return Cat(path, ": ", gzip ? "decompressed byte " : "byte ",
                      offset, ": ", message);
}

absl::Status InputErrorContext::Error(uint64_t offset,
                                      std::string_view expected,
                                      std::string_view got) const {
  return absl::InvalidArgumentError(
      At(offset, Cat("expected ", expected, ", got ", got)));
}

std::string DescribeByte(const char* p) {
  if (p == nullptr) return "end of file";
  unsigned char c = static_cast<unsigned char>(*p);
  if (c >= 0x20 && c < 0x7f) return Cat("'", std::string(1, *p), "'");
  return absl::StrFormat("byte 0x%02x", c);
}

std::string Quote(std::string_view text) {
  std::string out = "'";
  size_t n = 0;
  for (char c : text) {
    if (++n > 40) {
      out += "...";
      break;
    }
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", u);
    }
  }
  out += "'";
  return out;
}

}  // namespace tracetable::chrome_json
