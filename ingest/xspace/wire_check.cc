#include "ingest/xspace/wire_check.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "ingest/xspace/stat_json.h"

namespace tracetable::xspace_wire {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

constexpr int kMaxDepth = 100;  // protobuf's default recursion limit

class Walker {
 public:
  explicit Walker(CodedInputStream* in) : in_(in) {}

  // Walks fields until the current limit; false with `fault_` set on error.
  bool Message(const Descriptor* type, int depth) {
    while (in_->BytesUntilLimit() != 0) {
      const int at = in_->CurrentPosition();
      const uint32_t tag = in_->ReadTag();
      const int number = WireFormatLite::GetTagFieldNumber(tag);
      if (tag == 0 || number == 0) return Fail(at, "invalid or truncated field tag");
      const FieldDescriptor* field = type->FindFieldByNumber(number);
      const bool nested = field != nullptr &&
                          WireFormatLite::GetTagWireType(tag) ==
                              WireFormatLite::WIRETYPE_LENGTH_DELIMITED &&
                          (field->type() == FieldDescriptor::TYPE_MESSAGE ||
                           field->type() == FieldDescriptor::TYPE_STRING);
      if (!nested) {
        // Unknown fields and scalars: protobuf skips or reads them the same
        // way SkipField does, so a failure here is a failure there.
        if (!WireFormatLite::SkipField(in_, tag)) {
          return Fail(at, absl::StrCat("malformed or truncated field ", number,
                                       " in ", type->name()));
        }
        continue;
      }
      if (!LengthDelimited(field, depth, at)) return false;
    }
    return true;
  }

  const WireFault& fault() const { return fault_; }

 private:
  bool LengthDelimited(const FieldDescriptor* field, int depth, int at) {
    uint32_t length;
    if (!in_->ReadVarint32(&length)) {
      return Fail(at, absl::StrCat("truncated length of ", field->full_name()));
    }
    const int start = in_->CurrentPosition();
    if (length > static_cast<uint32_t>(in_->BytesUntilLimit())) {
      return Fail(start, absl::StrCat(field->full_name(), " claims ", length,
                                      " bytes but its enclosing message has ",
                                      in_->BytesUntilLimit(), " left"));
    }
    if (field->type() == FieldDescriptor::TYPE_STRING) {
      std::string text;
      in_->ReadString(&text, static_cast<int>(length));
      if (!IsValidUtf8(text)) {
        return Fail(start, absl::StrCat(field->full_name(), " is not UTF-8"));
      }
      return true;
    }
    if (depth + 1 >= kMaxDepth) return Fail(at, "messages nested too deeply");
    const auto limit = in_->PushLimit(static_cast<int>(length));
    if (!Message(field->message_type(), depth + 1)) return false;
    in_->PopLimit(limit);
    return true;
  }

  bool Fail(int at, std::string what) {
    fault_.offset = static_cast<uint64_t>(at);
    fault_.what = std::move(what);
    return false;
  }

  CodedInputStream* in_;
  WireFault fault_;
};

}  // namespace

std::optional<WireFault> FindWireFault(std::string_view bytes,
                                       const Descriptor* type) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  in.PushLimit(static_cast<int>(bytes.size()));
  Walker walker(&in);
  if (walker.Message(type, 0)) return std::nullopt;
  return walker.fault();
}

}  // namespace tracetable::xspace_wire
