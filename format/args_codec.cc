#include "format/args_codec.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/tracetable.pb.h"

namespace tracetable {
namespace {

constexpr uint32_t kSlots = 256;
constexpr size_t kPresentBytes = kSlots / 8;

// Value types in the low 3 bits of a field's shape varint.
enum ValueType : uint32_t {
  kInt = 0,     // ints column
  kString = 1,  // texts column: the characters between the quotes, verbatim
  kRaw = 2,     // texts column: the value's text verbatim (1.5, [..], {..})
  kTrue = 3,
  kFalse = 4,
  kNull = 5,
};

struct Field {
  std::string_view key;  // between the quotes, escapes verbatim
  ValueType type;
  std::string_view text;  // kString: between the quotes; kInt, kRaw: the value
  int64_t value = 0;
};

// End of the string whose opening quote is at s[i]: the index past its
// closing quote, or npos.
size_t StringEnd(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// End of the value starting at s[i] (not a string): the first ',' or '}'
// outside brackets and strings, or npos.
size_t ValueEnd(std::string_view s, size_t i) {
  int depth = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"') {
      i = StringEnd(s, i);
      if (i == std::string_view::npos) return i;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (depth == 0) return c == '}' ? i : std::string_view::npos;
      --depth;
    }
    if (c == ',' && depth == 0) return i;
    ++i;
  }
  return std::string_view::npos;
}

// Splits a compact flat object into fields. Returns false on anything that is
// not `{"k":v,...}`; the caller also checks that rendering gives `json` back.
bool SplitObject(std::string_view json, std::vector<Field>* fields) {
  fields->clear();
  if (json.size() < 2 || json.front() != '{' || json.back() != '}') return false;
  size_t i = 1;
  if (json.size() == 2) return true;
  while (true) {
    if (i >= json.size() || json[i] != '"') return false;
    const size_t key_end = StringEnd(json, i);
    if (key_end == std::string_view::npos || key_end >= json.size() || json[key_end] != ':') return false;
    Field f;
    f.key = json.substr(i + 1, key_end - i - 2);
    i = key_end + 1;
    if (i >= json.size()) return false;
    size_t end;
    if (json[i] == '"') {
      end = StringEnd(json, i);
      if (end == std::string_view::npos) return false;
      f.type = kString;
      f.text = json.substr(i + 1, end - i - 2);
    } else {
      end = ValueEnd(json, i);
      if (end == std::string_view::npos || end == i) return false;
      f.text = json.substr(i, end - i);
      if (f.text == "true") {
        f.type = kTrue;
      } else if (f.text == "false") {
        f.type = kFalse;
      } else if (f.text == "null") {
        f.type = kNull;
      } else if (absl::SimpleAtoi(Av(f.text), &f.value) && absl::StrCat(f.value) == Av(f.text)) {
        f.type = kInt;  // only the canonical spelling: "007", "+1", "-0" stay raw
      } else {
        f.type = kRaw;
      }
    }
    fields->push_back(f);
    if (end >= json.size()) return false;
    if (json[end] == '}') return end + 1 == json.size();
    if (json[end] != ',') return false;
    i = end + 1;
  }
}

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool ReadVarint(std::string_view s, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < s.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
    *v |= uint64_t{b & 0x7F} << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Walks the entries of a parsed block in slot order, rendering the ones
// `want` accepts. `emit(slot, json)` returns false to stop.
template <typename Want, typename Emit>
absl::Status Walk(const proto::ArgsBlock& block, Want want, Emit emit) {
  const std::string& present = block.present();
  if (present.size() != kPresentBytes) return absl::DataLossError("arguments record: bad slot map");
  const std::string& shape = block.shape();
  size_t pos = 0;
  int next_int = 0, next_text = 0;
  auto text = [&](std::string_view* t) {
    if (next_text >= block.texts_size()) return false;
    *t = block.texts(next_text++);
    return true;
  };
  std::string json;
  for (uint32_t slot = 0; slot < kSlots; ++slot) {
    if (!(static_cast<uint8_t>(present[slot / 8]) & (1u << (slot % 8)))) continue;
    const bool render = want(slot);
    uint64_t n;
    if (!ReadVarint(shape, &pos, &n)) return absl::DataLossError("arguments record: bad shape");
    json.clear();
    std::string_view t;
    if (n == 0) {
      if (!text(&t)) return absl::DataLossError("arguments record: missing text");
      if (render) json.assign(t.data(), t.size());
    } else {
      if (render) json.push_back('{');
      for (uint64_t f = 0; f + 1 < n; ++f) {
        uint64_t field;
        if (!ReadVarint(shape, &pos, &field) || (field >> 3) >= static_cast<uint64_t>(block.keys_size())) {
          return absl::DataLossError("arguments record: bad field");
        }
        if (render) {
          if (f > 0) json.push_back(',');
          absl::StrAppend(&json, "\"", block.keys(static_cast<int>(field >> 3)), "\":");
        }
        switch (static_cast<ValueType>(field & 7)) {
          case kInt:
            if (next_int >= block.ints_size()) return absl::DataLossError("arguments record: missing int");
            if (render) absl::StrAppend(&json, block.ints(next_int));
            ++next_int;
            break;
          case kString:
            if (!text(&t)) return absl::DataLossError("arguments record: missing text");
            if (render) absl::StrAppend(&json, "\"", Av(t), "\"");
            break;
          case kRaw:
            if (!text(&t)) return absl::DataLossError("arguments record: missing text");
            if (render) json.append(t.data(), t.size());
            break;
          case kTrue: if (render) json += "true"; break;
          case kFalse: if (render) json += "false"; break;
          case kNull: if (render) json += "null"; break;
          default:
            return absl::DataLossError("arguments record: bad value type");
        }
      }
      if (render) json.push_back('}');
    }
    if (render && !emit(slot, std::move(json))) return absl::OkStatus();
  }
  if (pos != shape.size() || next_int != block.ints_size() || next_text != block.texts_size()) {
    return absl::DataLossError("arguments record: columns disagree with its shape");
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeArgsBlock(const std::vector<ArgsEntry>& entries) {
  proto::ArgsBlock block;
  std::string present(kPresentBytes, '\0');
  std::string shape;
  absl::flat_hash_map<std::string_view, uint32_t> key_ids;
  std::vector<Field> fields;
  for (const ArgsEntry& e : entries) {
    present[e.slot / 8] = static_cast<char>(present[e.slot / 8] | (1u << (e.slot % 8)));
    bool columns = SplitObject(e.json, &fields);
    if (columns) {
      std::string rendered = "{";
      for (size_t i = 0; i < fields.size(); ++i) {
        absl::StrAppend(&rendered, i ? "," : "", "\"", Av(fields[i].key), "\":",
                        fields[i].type == kString ? "\"" : "", Av(fields[i].text),
                        fields[i].type == kString ? "\"" : "");
      }
      rendered += "}";
      columns = rendered == e.json;
    }
    if (!columns) {
      AppendVarint(&shape, 0);
      block.add_texts(e.json);
      continue;
    }
    AppendVarint(&shape, fields.size() + 1);
    for (const Field& f : fields) {
      auto [it, inserted] = key_ids.try_emplace(f.key, block.keys_size());
      if (inserted) block.add_keys(std::string(f.key));
      AppendVarint(&shape, (uint64_t{it->second} << 3) | f.type);
      if (f.type == kInt) {
        block.add_ints(f.value);
      } else if (f.type == kString || f.type == kRaw) {
        block.add_texts(std::string(f.text));
      }
    }
  }
  block.set_present(std::move(present));
  block.set_shape(std::move(shape));
  return block.SerializeAsString();
}

absl::Status DecodeArgsBlock(std::string_view bytes, std::vector<ArgsEntry>* out) {
  out->clear();
  proto::ArgsBlock block;
  if (!block.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("arguments record does not parse");
  }
  return Walk(
      block, [](uint32_t) { return true; },
      [out](uint32_t slot, std::string json) {
        out->push_back(ArgsEntry{slot, std::move(json)});
        return true;
      });
}

absl::StatusOr<std::string> FindArgs(std::string_view bytes, uint32_t slot) {
  proto::ArgsBlock block;
  if (!block.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("arguments record does not parse");
  }
  std::string found;
  bool have = false;
  absl::Status s = Walk(
      block, [slot](uint32_t s) { return s == slot; },
      [&](uint32_t, std::string json) {
        found = std::move(json);
        have = true;
        return false;
      });
  if (!s.ok()) return s;
  if (!have) return absl::NotFoundError("no arguments");
  return found;
}

}  // namespace tracetable
