#include "format/thread_time_codec.h"

#include <bit>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "format/tracetable.pb.h"

namespace tracetable {
namespace {

constexpr uint32_t kSlots = 256;
constexpr size_t kBitmapBytes = kSlots / 8;

bool Bit(const std::string& bitmap, uint32_t slot) {
  return !bitmap.empty() && (static_cast<uint8_t>(bitmap[slot / 8]) >> (slot % 8)) & 1;
}

void SetBit(std::string* bitmap, uint32_t slot) {
  if (bitmap->empty()) bitmap->assign(kBitmapBytes, '\0');
  (*bitmap)[slot / 8] = static_cast<char>((*bitmap)[slot / 8] | (1 << (slot % 8)));
}

uint64_t Magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

// Parses and checks the block: bitmaps of 32 bytes or none, one value per
// set bit, values * unit within int64.
absl::Status Parse(std::string_view bytes, proto::ThreadTimeBlock* b) {
  if (!b->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("thread time record does not parse");
  }
  for (const std::string* m : {&b->tts_present(), &b->tdur_present()}) {
    if (!m->empty() && m->size() != kBitmapBytes) {
      return absl::DataLossError("thread time record with a bitmap of the wrong size");
    }
  }
  auto count = [](const std::string& m) {
    int n = 0;
    for (char c : m) n += std::popcount(static_cast<uint8_t>(c));
    return n;
  };
  if (count(b->tts_present()) != b->tts_size() || count(b->tdur_present()) != b->tdur_size()) {
    return absl::DataLossError("thread time record whose counts do not match its bitmaps");
  }
  if (b->tts_size() + b->tdur_size() == 0) return absl::DataLossError("empty thread time record");
  const __int128 unit = b->unit() == 0 ? 1 : b->unit();
  for (const auto* col : {&b->tts(), &b->tdur()}) {
    for (int64_t v : *col) {
      const __int128 ps = unit * v;
      if (ps > INT64_MAX || ps < INT64_MIN) {
        return absl::DataLossError("thread time record with a value beyond int64 picoseconds");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeThreadTimeBlock(const std::vector<ThreadTimeEntry>& entries) {
  // Whole microseconds (what tracers write) store as microseconds.
  uint64_t unit = 0;
  for (const ThreadTimeEntry& e : entries) {
    for (const std::optional<int64_t>& v : {e.tts, e.tdur}) {
      if (v) unit = std::gcd(unit, Magnitude(*v));
    }
  }
  if (unit == 0 || unit > INT64_MAX) unit = 1;
  const int64_t u = static_cast<int64_t>(unit);
  proto::ThreadTimeBlock b;
  for (const ThreadTimeEntry& e : entries) {
    if (e.tts) {
      SetBit(b.mutable_tts_present(), e.slot);
      b.add_tts(*e.tts / u);
    }
    if (e.tdur) {
      SetBit(b.mutable_tdur_present(), e.slot);
      b.add_tdur(*e.tdur / u);
    }
  }
  if (unit != 1) b.set_unit(unit);
  return b.SerializeAsString();
}

absl::Status DecodeThreadTimeBlock(std::string_view bytes, std::vector<ThreadTimeEntry>* out) {
  out->clear();
  proto::ThreadTimeBlock b;
  if (absl::Status s = Parse(bytes, &b); !s.ok()) return s;
  const int64_t unit = b.unit() == 0 ? 1 : static_cast<int64_t>(b.unit());
  int tts = 0, tdur = 0;
  for (uint32_t slot = 0; slot < kSlots; ++slot) {
    const bool has_tts = Bit(b.tts_present(), slot), has_tdur = Bit(b.tdur_present(), slot);
    if (!has_tts && !has_tdur) continue;
    ThreadTimeEntry e;
    e.slot = slot;
    if (has_tts) e.tts = b.tts(tts++) * unit;
    if (has_tdur) e.tdur = b.tdur(tdur++) * unit;
    out->push_back(e);
  }
  return absl::OkStatus();
}

absl::StatusOr<ThreadTimeEntry> FindThreadTime(std::string_view bytes, uint32_t slot) {
  proto::ThreadTimeBlock b;
  if (absl::Status s = Parse(bytes, &b); !s.ok()) return s;
  if (slot >= kSlots) return absl::NotFoundError(absl::StrCat("no thread time in slot ", slot));
  const int64_t unit = b.unit() == 0 ? 1 : static_cast<int64_t>(b.unit());
  // The index of a slot's value is the number of set bits before it.
  auto rank = [slot](const std::string& m) {
    int n = 0;
    for (uint32_t i = 0; i < slot / 8; ++i) n += std::popcount(static_cast<uint8_t>(m[i]));
    return n + std::popcount(static_cast<uint8_t>(static_cast<uint8_t>(m[slot / 8]) & ((1u << (slot % 8)) - 1)));
  };
  ThreadTimeEntry e;
  e.slot = slot;
  if (Bit(b.tts_present(), slot)) e.tts = b.tts(rank(b.tts_present())) * unit;
  if (Bit(b.tdur_present(), slot)) e.tdur = b.tdur(rank(b.tdur_present())) * unit;
  if (!e.tts && !e.tdur) return absl::NotFoundError(absl::StrCat("no thread time in slot ", slot));
  return e;
}

}  // namespace tracetable
