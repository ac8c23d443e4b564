#include "format/args_codec.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/tracetable.pb.h"
#include "format/varint.h"

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
  // Whitespace before the key, before ':', after ':' and after the value.
  std::string_view gaps[4];
};

// Gaps of a layout are joined by a character whitespace never holds.
constexpr char kGapSeparator = ',';

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

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

// Splits a flat object into fields, with the whitespace around them.
// Returns false on anything that is not `{"k":v,...}`; the caller also checks
// that rendering gives `json` back.
bool SplitObject(std::string_view json, std::vector<Field>* fields) {
  fields->clear();
  if (json.size() < 2 || json.front() != '{' || json.back() != '}') return false;
  if (json.size() == 2) return true;
  size_t i = 1;
  while (true) {
    Field f;
    size_t j = SkipSpace(json, i);
    f.gaps[0] = json.substr(i, j - i);
    i = j;
    if (i >= json.size() || json[i] != '"') return false;
    const size_t key_end = StringEnd(json, i);
    if (key_end == std::string_view::npos) return false;
    f.key = json.substr(i + 1, key_end - i - 2);
    j = SkipSpace(json, key_end);
    f.gaps[1] = json.substr(key_end, j - key_end);
    if (j >= json.size() || json[j] != ':') return false;
    i = j + 1;
    j = SkipSpace(json, i);
    f.gaps[2] = json.substr(i, j - i);
    i = j;
    if (i >= json.size()) return false;
    size_t end;
    if (json[i] == '"') {
      end = StringEnd(json, i);
      if (end == std::string_view::npos) return false;
      f.type = kString;
      f.text = json.substr(i + 1, end - i - 2);
    } else {
      end = ValueEnd(json, i);
      if (end == std::string_view::npos) return false;
      while (end > i && IsSpace(json[end - 1])) --end;  // the gap after it
      if (end == i) return false;
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
    j = SkipSpace(json, end);
    f.gaps[3] = json.substr(end, j - end);
    fields->push_back(f);
    if (j >= json.size()) return false;
    if (json[j] == '}') return j + 1 == json.size();
    if (json[j] != ',') return false;
    i = j + 1;
  }
}

// Appends field `i` of an object; `gaps` has its 4 gaps, or is empty for none.
void AppendField(std::string* out, size_t i, std::string_view key, const std::string_view* gaps,
                 std::string_view value, bool quoted) {
  static constexpr std::string_view kNoGaps[4] = {};
  if (gaps == nullptr) gaps = kNoGaps;
  if (i > 0) out->push_back(',');
  absl::StrAppend(out, Av(gaps[0]), "\"", Av(key), "\"", Av(gaps[1]), ":", Av(gaps[2]),
                  quoted ? "\"" : "", Av(value), quoted ? "\"" : "", Av(gaps[3]));
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
  std::vector<std::string_view> gaps;
  for (uint32_t slot = 0; slot < kSlots; ++slot) {
    if (!(static_cast<uint8_t>(present[slot / 8]) & (1u << (slot % 8)))) continue;
    const bool render = want(slot);
    uint64_t head;
    if (!ReadVarint(shape, &pos, &head)) return absl::DataLossError("arguments record: bad shape");
    json.clear();
    std::string_view t;
    if (head == 0) {
      if (!text(&t)) return absl::DataLossError("arguments record: missing text");
      if (render) json.assign(t.data(), t.size());
    } else {
      if (head == 1) return absl::DataLossError("arguments record: bad shape");
      const uint64_t n = (head >> 1) - 1;
      gaps.clear();
      if (head & 1) {
        uint64_t layout;
        if (!ReadVarint(shape, &pos, &layout) || layout >= static_cast<uint64_t>(block.layouts_size())) {
          return absl::DataLossError("arguments record: bad layout");
        }
        std::string_view rest = block.layouts(static_cast<int>(layout));
        for (size_t cut; (cut = rest.find(kGapSeparator)) != std::string_view::npos;) {
          gaps.push_back(rest.substr(0, cut));
          rest.remove_prefix(cut + 1);
        }
        gaps.push_back(rest);
        if (gaps.size() != 4 * n) return absl::DataLossError("arguments record: layout does not fit");
      }
      if (render) json.push_back('{');
      for (uint64_t f = 0; f < n; ++f) {
        uint64_t field;
        if (!ReadVarint(shape, &pos, &field) || (field >> 3) >= static_cast<uint64_t>(block.keys_size())) {
          return absl::DataLossError("arguments record: bad field");
        }
        const std::string_view* field_gaps = gaps.empty() ? nullptr : &gaps[4 * f];
        const std::string_view key = block.keys(static_cast<int>(field >> 3));
        switch (static_cast<ValueType>(field & 7)) {
          case kInt:
            if (next_int >= block.ints_size()) return absl::DataLossError("arguments record: missing int");
            if (render) AppendField(&json, f, key, field_gaps, absl::StrCat(block.ints(next_int)), false);
            ++next_int;
            break;
          case kString:
          case kRaw:
            if (!text(&t)) return absl::DataLossError("arguments record: missing text");
            if (render) AppendField(&json, f, key, field_gaps, t, (field & 7) == kString);
            break;
          case kTrue: if (render) AppendField(&json, f, key, field_gaps, "true", false); break;
          case kFalse: if (render) AppendField(&json, f, key, field_gaps, "false", false); break;
          case kNull: if (render) AppendField(&json, f, key, field_gaps, "null", false); break;
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
  absl::flat_hash_map<std::string, uint32_t> layout_ids;
  std::vector<Field> fields;
  std::string rendered, layout;  // reused: one of each per entry would allocate
  for (const ArgsEntry& e : entries) {
    present[e.slot / 8] = static_cast<char>(present[e.slot / 8] | (1u << (e.slot % 8)));
    bool columns = SplitObject(e.json, &fields);
    layout.clear();
    if (columns) {
      rendered.assign("{");
      bool spaced = false;
      for (size_t i = 0; i < fields.size(); ++i) {
        const Field& f = fields[i];
        AppendField(&rendered, i, f.key, f.gaps, f.text, f.type == kString);
        for (int g = 0; g < 4; ++g) {
          spaced |= !f.gaps[g].empty();
          if (i + g > 0) layout.push_back(kGapSeparator);
          layout.append(f.gaps[g].data(), f.gaps[g].size());
        }
      }
      rendered += "}";
      columns = rendered == e.json;
      if (!spaced) layout.clear();
    }
    if (!columns) {
      AppendVarint(&shape, 0);
      block.add_texts(e.json);
      continue;
    }
    AppendVarint(&shape, (fields.size() + 1) * 2 + (layout.empty() ? 0 : 1));
    if (!layout.empty()) {
      auto [it, inserted] = layout_ids.try_emplace(layout, block.layouts_size());
      if (inserted) block.add_layouts(layout);
      AppendVarint(&shape, it->second);
    }
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
