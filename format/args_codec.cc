#include "format/args_codec.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/tracetable.pb.h"
#include "format/varint.h"

namespace tracetable {
namespace {

constexpr uint32_t kSlots = 256;
constexpr size_t kPresentBytes = kSlots / 8;

using namespace args_internal;  // NOLINT: this file's own types

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

// Reads `s` when it is how an int64 prints, -?(0|[1-9][0-9]*) but not "-0":
// other spellings ("007", "+1", "-0", "1e3") and numbers out of range stay
// verbatim.
bool CanonicalInt(std::string_view s, int64_t* value) {
  const bool negative = !s.empty() && s[0] == '-';
  const size_t digits = s.size() - negative;
  // 19 digits never overflow a uint64; 20 are out of int64's range anyway.
  if (digits == 0 || digits > 19 || (s[negative] == '0' && (digits > 1 || negative))) return false;
  uint64_t magnitude = 0;
  for (size_t i = negative; i < s.size(); ++i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - '0';
    if (d > 9) return false;
    magnitude = magnitude * 10 + d;
  }
  constexpr uint64_t kMaxPositive = uint64_t{INT64_MAX};
  if (magnitude > kMaxPositive + (negative ? 1 : 0)) return false;
  *value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

// ValueEnd(s, i), sooner for a number followed by ',' or '}': most values
// are.
size_t NumberOrValueEnd(std::string_view s, size_t i) {
  size_t j = i;
  while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || s[j] == '-' || s[j] == '.')) ++j;
  if (j > i && j < s.size() && (s[j] == ',' || s[j] == '}')) return j;
  return ValueEnd(s, i);
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
      end = NumberOrValueEnd(json, i);
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
      } else if (CanonicalInt(f.text, &f.value)) {
        f.type = kInt;
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

// Whether the fields, rendered back as Walk() renders them, spell `json`
// exactly. SplitObject cuts them out of it in order, so it is enough that
// each piece is the text right after the one before, up to the closing brace.
bool SpellsBack(std::string_view json, const std::vector<Field>& fields) {
  const char* p = json.data() + 1;
  const char* const end = json.data() + json.size() - 1;  // the '}'
  auto piece = [&](std::string_view s) {
    if (!s.empty() && s.data() != p) return false;
    p += s.size();
    return p <= end;
  };
  auto literal = [&](char c) { return p < end && *p++ == c; };
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field& f = fields[i];
    const bool quoted = f.type == kString;
    if ((i > 0 && !literal(',')) || !piece(f.gaps[0]) || !literal('"') || !piece(f.key) || !literal('"') ||
        !piece(f.gaps[1]) || !literal(':') || !piece(f.gaps[2]) || (quoted && !literal('"')) || !piece(f.text) ||
        (quoted && !literal('"')) || !piece(f.gaps[3])) {
      return false;
    }
  }
  return p == end && *end == '}';
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
  if (block.ints_size() > 0 && block.int_deltas_size() > 0) {
    return absl::DataLossError("arguments record: two integer columns");
  }
  const bool deltas = block.int_deltas_size() > 0;
  const int num_ints = deltas ? block.int_deltas_size() : block.ints_size();
  std::vector<uint64_t> last_int(deltas ? block.keys_size() : 0);
  std::vector<bool> absolute(block.keys_size());
  for (uint32_t k : block.absolute_keys()) {
    if (!deltas || k >= absolute.size()) return absl::DataLossError("arguments record: bad absolute key");
    absolute[k] = true;
  }
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
          case kInt: {
            if (next_int >= num_ints) return absl::DataLossError("arguments record: missing int");
            int64_t value;
            if (deltas && absolute[field >> 3]) {
              value = block.int_deltas(next_int);
            } else if (deltas) {
              uint64_t& last = last_int[field >> 3];
              last += static_cast<uint64_t>(block.int_deltas(next_int));
              value = static_cast<int64_t>(last);
            } else {
              value = block.ints(next_int);
            }
            if (render) AppendField(&json, f, key, field_gaps, absl::StrCat(value), false);
            ++next_int;
            break;
          }
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
  if (pos != shape.size() || next_int != num_ints || next_text != block.texts_size()) {
    return absl::DataLossError("arguments record: columns disagree with its shape");
  }
  return absl::OkStatus();
}

}  // namespace

void ArgsBlockEncoder::Add(uint32_t slot, std::string_view json) {
  std::string& present = *block_.mutable_present();
  if (empty_) present.assign(kPresentBytes, '\0');
  empty_ = false;
  present[slot / 8] = static_cast<char>(present[slot / 8] | (1u << (slot % 8)));
  std::string& shape = *block_.mutable_shape();
  const bool columns = SplitObject(json, &fields_) && SpellsBack(json, fields_);
  if (!columns) {
    AppendVarint(&shape, 0);
    block_.add_texts()->assign(json.data(), json.size());
    return;
  }
  bool spaced = false;
  for (const Field& f : fields_) {
    for (std::string_view gap : f.gaps) spaced |= !gap.empty();
  }
  AppendVarint(&shape, (fields_.size() + 1) * 2 + (spaced ? 1 : 0));
  if (spaced) {
    layout_.clear();
    for (size_t i = 0; i < fields_.size(); ++i) {
      for (int g = 0; g < 4; ++g) {
        if (i + g > 0) layout_.push_back(kGapSeparator);
        layout_.append(fields_[i].gaps[g].data(), fields_[i].gaps[g].size());
      }
    }
    auto it = layout_ids_.find(std::string_view(layout_));
    if (it == layout_ids_.end()) {
      std::string* kept = block_.add_layouts();
      kept->assign(layout_);
      it = layout_ids_.emplace(std::string_view(*kept), block_.layouts_size() - 1).first;
    }
    AppendVarint(&shape, it->second);
  }
  if (key_at_.size() < fields_.size()) key_at_.resize(fields_.size());
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    uint32_t key;
    if (key_at_[i].first.data() != nullptr && key_at_[i].first == f.key) {
      key = key_at_[i].second;
    } else {
      auto it = key_ids_.find(f.key);
      if (it == key_ids_.end()) {
        std::string* kept = block_.add_keys();
        kept->assign(f.key.data(), f.key.size());
        it = key_ids_.emplace(std::string_view(*kept), block_.keys_size() - 1).first;
      }
      key = it->second;
      key_at_[i] = {it->first, key};
    }
    AppendVarint(&shape, (uint64_t{key} << 3) | f.type);
    if (f.type == kInt) {
      if (key >= key_ints_.size()) key_ints_.resize(key + 1);
      KeyInts& k = key_ints_[key];
      const auto value = static_cast<uint64_t>(f.value);
      k.saved_by_values +=
          VarintLength(ZigZag(static_cast<int64_t>(value - k.last))) - VarintLength(ZigZag(f.value));
      k.last = value;
      ints_.emplace_back(key, f.value);
    } else if (f.type == kString || f.type == kRaw) {
      block_.add_texts()->assign(f.text.data(), f.text.size());
    }
  }
}

// Differences suit integers that count up (ids, indexes); values spread at
// random (flops, bytes) are shorter as they are (gen 1M: 4% of the
// integers' bytes).
void ArgsBlockEncoder::PutInts() {
  for (size_t k = 0; k < key_ints_.size(); ++k) {
    key_ints_[k].last = 0;
    if (key_ints_[k].saved_by_values > 0) block_.add_absolute_keys(static_cast<uint32_t>(k));
  }
  google::protobuf::RepeatedField<int64_t>& column = *block_.mutable_int_deltas();
  column.Reserve(static_cast<int>(ints_.size()));
  for (const auto& [key, value] : ints_) {
    KeyInts& k = key_ints_[key];
    if (k.saved_by_values > 0) {
      column.AddAlreadyReserved(value);
    } else {
      column.AddAlreadyReserved(static_cast<int64_t>(static_cast<uint64_t>(value) - k.last));
      k.last = static_cast<uint64_t>(value);
    }
  }
}

std::string ArgsBlockEncoder::Finish() {
  if (empty_) block_.mutable_present()->assign(kPresentBytes, '\0');
  PutInts();
  std::string bytes = block_.SerializeAsString();
  block_.Clear();
  key_ids_.clear();
  key_at_.clear();
  ints_.clear();
  key_ints_.clear();
  layout_ids_.clear();
  empty_ = true;
  return bytes;
}

std::string EncodeArgsBlock(const std::vector<ArgsEntry>& entries) {
  ArgsBlockEncoder encoder;
  for (const ArgsEntry& e : entries) encoder.Add(e.slot, e.json);
  return encoder.Finish();
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
