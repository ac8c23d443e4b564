// The limits below copy protobuf 3.21's ParseContext (parse_context.h/.cc),
// which is what the generated parser uses: where this reader is stricter or
// looser than it, DecodePlane and the generated XPlane would disagree.
#include "ingest/xspace/wire_reader.h"

#include <climits>
#include <cstring>

#include "google/protobuf/stubs/common.h"

namespace tracetable::xspace_wire {
namespace {

constexpr int kRecursionBudget = 100;  // CodedInputStream's default
constexpr int kSlopBytes = 16;         // ParseContext refuses sizes near INT_MAX

constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kDelimited = 2;
constexpr uint32_t kStartGroup = 3;
constexpr uint32_t kEndGroup = 4;
constexpr uint32_t kFixed32 = 5;

constexpr uint32_t Tag(uint32_t field, uint32_t wire) { return field << 3 | wire; }

// The generated parser stops a message at tag 0 or an end-group tag.
bool EndsMessage(uint32_t tag) { return tag == 0 || (tag & 7) == kEndGroup; }

class Cursor {
 public:
  explicit Cursor(std::string_view bytes)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data())), end_(p_ + bytes.size()) {}

  bool AtEnd() const { return p_ == end_; }
  const char* pos() const { return reinterpret_cast<const char*>(p_); }

  // At most 5 bytes; bits past 32 are dropped (ReadTag).
  bool ReadTag(uint32_t* tag) {
    uint32_t v = 0;
    for (int i = 0; i < 5 && p_ != end_; ++i) {
      const uint32_t b = *p_++;
      v += (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        *tag = v;
        return true;
      }
    }
    return false;
  }

  // At most 10 bytes; bits past 64 are dropped (VarintParse).
  bool ReadVarint(uint64_t* value) {
    uint64_t v = 0;
    for (int i = 0; i < 10 && p_ != end_; ++i) {
      const uint64_t b = *p_++;
      v += (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        *value = v;
        return true;
      }
    }
    return false;
  }

  bool ReadFixed(size_t n, uint64_t* value) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    *value = 0;
    std::memcpy(value, p_, n);  // little-endian host, as protobuf assumes
    p_ += n;
    return true;
  }

  // A length prefix and that many bytes (ReadSize: at most 5 bytes, under
  // 2 GiB) inside what is left of the enclosing message.
  bool ReadDelimited(std::string_view* bytes) {
    uint64_t size = 0;
    for (int i = 0;; ++i) {
      if (p_ == end_ || i == 5) return false;
      const uint64_t b = *p_++;
      if (i == 4 && b >= 8) return false;
      size += (b & 0x7f) << (7 * i);
      if (b < 0x80) break;
    }
    if (size > INT_MAX - kSlopBytes || size > static_cast<uint64_t>(end_ - p_)) {
      return false;
    }
    *bytes = std::string_view(pos(), size);
    p_ += size;
    return true;
  }

  bool ReadString(std::string_view* text) {
    return ReadDelimited(text) &&
           google::protobuf::internal::IsStructurallyValidUTF8(
               text->data(), static_cast<int>(text->size()));
  }

  // Skips a field the message does not know (FieldParser / ParseGroup).
  bool SkipField(uint32_t tag, int budget) {
    if ((tag >> 3) == 0) return false;
    uint64_t ignored;
    std::string_view bytes;
    switch (tag & 7) {
      case kVarint: return ReadVarint(&ignored);
      case kFixed64: return ReadFixed(8, &ignored);
      case kDelimited: return ReadDelimited(&bytes);
      case kStartGroup: return SkipGroup(tag, budget - 1);
      case kFixed32: return ReadFixed(4, &ignored);
      default: return false;  // 6 and 7; end-group is the caller's
    }
  }

 private:
  bool SkipGroup(uint32_t start_tag, int budget) {
    if (budget < 0) return false;
    while (!AtEnd()) {
      uint32_t tag;
      if (!ReadTag(&tag)) return false;
      if (EndsMessage(tag)) return tag == start_tag + 1;
      if (!SkipField(tag, budget)) return false;
    }
    return false;  // the enclosing message ended first
  }

  const uint8_t* p_;
  const uint8_t* end_;
};

int64_t AsInt64(uint64_t v) { return static_cast<int64_t>(v); }

class PlaneParser {
 public:
  explicit PlaneParser(PlaneView* out) : out_(out) {}

  bool Plane(std::string_view bytes) {
    out_->id = 0;
    out_->name = {};
    out_->lines.clear();
    out_->events.clear();
    out_->stats.clear();
    out_->plane_stats.clear();
    out_->event_metadata.clear();
    out_->stat_metadata.clear();
    constexpr int kNested = kRecursionBudget - 1;
    Cursor c(bytes);
    while (!c.AtEnd()) {
      uint32_t tag;
      uint64_t v = 0;
      std::string_view b;
      if (!c.ReadTag(&tag)) return false;
      // The stream-level parse accepts an end only where the plane ends.
      if (EndsMessage(tag)) return c.AtEnd();
      bool ok;
      switch (tag) {
        case Tag(1, kVarint): ok = c.ReadVarint(&v); out_->id = AsInt64(v); break;
        case Tag(2, kDelimited): ok = c.ReadString(&out_->name); break;
        case Tag(3, kDelimited): ok = c.ReadDelimited(&b) && Line(b, kNested); break;
        case Tag(4, kDelimited): ok = c.ReadDelimited(&b) && EventMetadataEntry(b, kNested); break;
        case Tag(5, kDelimited): ok = c.ReadDelimited(&b) && StatMetadataEntry(b, kNested); break;
        case Tag(6, kDelimited):
          ok = c.ReadDelimited(&b) && Stat(b, kNested, &out_->plane_stats);
          break;
        default: ok = c.SkipField(tag, kRecursionBudget);
      }
      if (!ok) return false;
    }
    return true;
  }

 private:
  // map<int64, XEventMetadata> entry: key 1, value 2.
  bool EventMetadataEntry(std::string_view bytes, int budget) {
    if (budget < 0) return false;
    uint64_t key = 0;
    EventMetadataView value;
    value.stats_begin = value.stats_end = static_cast<uint32_t>(out_->stats.size());
    Cursor c(bytes);
    while (!c.AtEnd()) {
      uint32_t tag;
      std::string_view b;
      if (!c.ReadTag(&tag)) return false;
      bool ok;
      switch (tag) {
        case Tag(1, kVarint): ok = c.ReadVarint(&key); break;
        case Tag(2, kDelimited): ok = c.ReadDelimited(&b) && EventMetadata(b, budget - 1, &value); break;
        default: ok = !EndsMessage(tag) && c.SkipField(tag, budget);
      }
      if (!ok) return false;
    }
    out_->event_metadata.insert_or_assign(AsInt64(key), value);
    return true;
  }

  // Merges into `md`, as a second value in one map entry would.
  bool EventMetadata(std::string_view bytes, int budget, EventMetadataView* md) {
    if (budget < 0) return false;
    Cursor c(bytes);
    while (!c.AtEnd()) {
      uint32_t tag;
      uint64_t v = 0;
      std::string_view b;
      if (!c.ReadTag(&tag)) return false;
      bool ok;
      switch (tag) {
        case Tag(1, kVarint): ok = c.ReadVarint(&v); md->id = AsInt64(v); break;
        case Tag(2, kDelimited): ok = c.ReadString(&md->name); break;
        case Tag(3, kDelimited): ok = c.ReadDelimited(&b); break;  // metadata bytes
        case Tag(4, kDelimited): ok = c.ReadString(&md->display_name); break;
        case Tag(5, kDelimited):
          ok = c.ReadDelimited(&b) && Stat(b, budget - 1, &out_->stats);
          md->stats_end = static_cast<uint32_t>(out_->stats.size());
          break;
        case Tag(6, kVarint): ok = c.ReadVarint(&v); break;  // child_id
        case Tag(6, kDelimited): ok = c.ReadDelimited(&b) && PackedVarints(b); break;
        default: ok = !EndsMessage(tag) && c.SkipField(tag, budget);
      }
      if (!ok) return false;
    }
    return true;
  }

  // Packed varints must fill their length exactly.
  static bool PackedVarints(std::string_view bytes) {
    Cursor c(bytes);
    uint64_t ignored;
    while (!c.AtEnd()) {
      if (!c.ReadVarint(&ignored)) return false;
    }
    return true;
  }

  bool StatMetadataEntry(std::string_view bytes, int budget) {
    if (budget < 0) return false;
    uint64_t key = 0;
    StatMetadataView value;
    Cursor c(bytes);
    while (!c.AtEnd()) {
      uint32_t tag;
      std::string_view b;
      if (!c.ReadTag(&tag)) return false;
      bool ok;
      switch (tag) {
        case Tag(1, kVarint): ok = c.ReadVarint(&key); break;
        case Tag(2, kDelimited): ok = c.ReadDelimited(&b) && StatMetadata(b, budget - 1, &value); break;
        default: ok = !EndsMessage(tag) && c.SkipField(tag, budget);
      }
      if (!ok) return false;
    }
    out_->stat_metadata.insert_or_assign(AsInt64(key), value);
    return true;
  }

  static bool StatMetadata(std::string_view bytes, int budget, StatMetadataView* md) {
    if (budget < 0) return false;
    Cursor c(bytes);
    while (!c.AtEnd()) {
      uint32_t tag;
      uint64_t v = 0;
      if (!c.ReadTag(&tag)) return false;
      bool ok;
      switch (tag) {
        case Tag(1, kVarint): ok = c.ReadVarint(&v); md->id = AsInt64(v); break;
        case Tag(2, kDelimited): ok = c.ReadString(&md->name); break;
        case Tag(3, kDelimited): ok = c.ReadString(&md->description); break;
        default: ok = !EndsMessage(tag) && c.SkipField(tag, budget);
      }
      if (!ok) return false;
    }
    return true;
  }

  bool Line(std::string_view bytes, int budget) {
    if (budget < 0) return false;
    LineView line;
    line.events_begin = static_cast<uint32_t>(out_->events.size());
    Cursor c(bytes);
    while (!c.AtEnd()) {
      uint32_t tag;
      uint64_t v = 0;
      std::string_view b;
      if (!c.ReadTag(&tag)) return false;
      bool ok;
      switch (tag) {
        case Tag(1, kVarint): ok = c.ReadVarint(&v); line.id = AsInt64(v); break;
        case Tag(2, kDelimited): ok = c.ReadString(&line.name); break;
        case Tag(3, kVarint): ok = c.ReadVarint(&v); line.timestamp_ns = AsInt64(v); break;
        case Tag(4, kDelimited): ok = c.ReadDelimited(&b) && Event(b, budget - 1); break;
        case Tag(9, kVarint): ok = c.ReadVarint(&v); line.duration_ps = AsInt64(v); break;
        case Tag(10, kVarint): ok = c.ReadVarint(&v); line.display_id = AsInt64(v); break;
        case Tag(11, kDelimited): ok = c.ReadString(&line.display_name); break;
        default: ok = !EndsMessage(tag) && c.SkipField(tag, budget);
      }
      if (!ok) return false;
    }
    line.events_end = static_cast<uint32_t>(out_->events.size());
    out_->lines.push_back(line);
    return true;
  }

  bool Event(std::string_view bytes, int budget) {
    if (budget < 0) return false;
    EventView event;
    event.stats_begin = static_cast<uint32_t>(out_->stats.size());
    Cursor c(bytes);
    while (!c.AtEnd()) {
      uint32_t tag;
      uint64_t v = 0;
      std::string_view b;
      if (!c.ReadTag(&tag)) return false;
      bool ok;
      switch (tag) {
        case Tag(1, kVarint): ok = c.ReadVarint(&v); event.metadata_id = AsInt64(v); break;
        case Tag(2, kVarint):
          ok = c.ReadVarint(&v);
          event.data = EventView::Data::kOffsetPs;
          event.data_value = AsInt64(v);
          break;
        case Tag(3, kVarint): ok = c.ReadVarint(&v); event.duration_ps = AsInt64(v); break;
        case Tag(4, kDelimited):
          ok = c.ReadDelimited(&b) && Stat(b, budget - 1, &out_->stats);
          break;
        case Tag(5, kVarint):
          ok = c.ReadVarint(&v);
          event.data = EventView::Data::kNumOccurrences;
          event.data_value = AsInt64(v);
          break;
        default: ok = !EndsMessage(tag) && c.SkipField(tag, budget);
      }
      if (!ok) return false;
    }
    event.stats_end = static_cast<uint32_t>(out_->stats.size());
    out_->events.push_back(event);
    return true;
  }

  static bool Stat(std::string_view bytes, int budget, std::vector<StatView>* to) {
    if (budget < 0) return false;
    StatView stat;
    Cursor c(bytes);
    while (!c.AtEnd()) {
      uint32_t tag;
      uint64_t v = 0;
      if (!c.ReadTag(&tag)) return false;
      bool ok;
      switch (tag) {
        case Tag(1, kVarint): ok = c.ReadVarint(&v); stat.metadata_id = AsInt64(v); break;
        case Tag(2, kFixed64): ok = c.ReadFixed(8, &v); SetNumber(&stat, StatKind::kDouble, v); break;
        case Tag(3, kVarint): ok = c.ReadVarint(&v); SetNumber(&stat, StatKind::kUint64, v); break;
        case Tag(4, kVarint): ok = c.ReadVarint(&v); SetNumber(&stat, StatKind::kInt64, v); break;
        case Tag(5, kDelimited): ok = SetText(&c, &stat, StatKind::kStr); break;
        case Tag(6, kDelimited): ok = SetText(&c, &stat, StatKind::kBytes); break;
        case Tag(7, kVarint): ok = c.ReadVarint(&v); SetNumber(&stat, StatKind::kRef, v); break;
        default: ok = !EndsMessage(tag) && c.SkipField(tag, budget);
      }
      if (!ok) return false;
    }
    to->push_back(stat);
    return true;
  }

  // A oneof keeps only its last member.
  static void SetNumber(StatView* stat, StatKind kind, uint64_t bits) {
    stat->kind = kind;
    stat->bits = bits;
    stat->text = {};
  }
  static bool SetText(Cursor* c, StatView* stat, StatKind kind) {
    std::string_view text;
    if (!(kind == StatKind::kStr ? c->ReadString(&text) : c->ReadDelimited(&text))) {
      return false;
    }
    stat->kind = kind;
    stat->bits = 0;
    stat->text = text;
    return true;
  }

  PlaneView* out_;
};

}  // namespace

double StatView::double_value() const {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

bool DecodePlane(std::string_view bytes, PlaneView* out) {
  return PlaneParser(out).Plane(bytes);
}

}  // namespace tracetable::xspace_wire
