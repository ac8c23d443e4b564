// tt_table_diff A B: are two tables the same records? Compares every key and
// value of the two tables' sorted files, and the metadata ("M") as a message
// without its table id (its maps serialise in hash order, and the id is new
// per ingest). For checking that an ingest change keeps tables the same
// bytes as another build's on real inputs. Argument blocks ("A") and memory
// segments ("Y") whose bytes differ count as the same when they decode to the
// same objects and columns (format versions 5 and 6 encode integers
// differently), and so does a metadata record that differs only in its
// format version; both are reported. Exit 0 when the same, 1 when not.
// tt_table_diff --sizes A: records, bytes and approximate compressed bytes by
// key prefix, and the bytes of each tile field.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/args_codec.h"
#include "format/keys.h"
#include "format/memory_segment_codec.h"
#include "format/tracetable.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "snappy.h"
#include "store/table_files.h"

namespace {

bool SameArgs(const leveldb::Slice& a, const leveldb::Slice& b) {
  std::vector<tracetable::ArgsEntry> ea, eb;
  return tracetable::DecodeArgsBlock(std::string_view(a.data(), a.size()), &ea).ok() &&
         tracetable::DecodeArgsBlock(std::string_view(b.data(), b.size()), &eb).ok() && ea == eb;
}

bool SameSegment(const leveldb::Slice& a, const leveldb::Slice& b) {
  tracetable::proto::MemorySegment sa, sb;
  return sa.ParseFromArray(a.data(), static_cast<int>(a.size())) &&
         sb.ParseFromArray(b.data(), static_cast<int>(b.size())) && tracetable::DecodeSegmentColumns(&sa).ok() &&
         tracetable::DecodeSegmentColumns(&sb).ok() && google::protobuf::util::MessageDifferencer::Equals(sa, sb);
}

int Diff(const std::string& a_dir, const std::string& b_dir) {
  auto a = tracetable::TableFiles::Open(a_dir, nullptr);
  auto b = tracetable::TableFiles::Open(b_dir, nullptr);
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "cannot open: %s / %s\n", a.status().ToString().c_str(), b.status().ToString().c_str());
    return 2;
  }
  std::unique_ptr<leveldb::Iterator> ia = (*a)->NewIterator(), ib = (*b)->NewIterator();
  size_t records = 0, differ = 0, reencoded = 0;
  for (ia->SeekToFirst(), ib->SeekToFirst(); ia->Valid() || ib->Valid(); ia->Next(), ib->Next(), ++records) {
    if (!ia->Valid() || !ib->Valid()) {
      std::printf("one table ends after %zu records\n", records);
      return 1;
    }
    if (ia->key() != ib->key()) {
      std::printf("record %zu: keys differ\n", records);
      return 1;
    }
    if (ia->key() == leveldb::Slice("M")) {
      tracetable::proto::TableMeta ma, mb;
      if (!ma.ParseFromArray(ia->value().data(), static_cast<int>(ia->value().size())) ||
          !mb.ParseFromArray(ib->value().data(), static_cast<int>(ib->value().size()))) {
        std::printf("metadata does not parse\n");
        return 1;
      }
      ma.clear_table_id();
      mb.clear_table_id();
      if (ma.format_version() != mb.format_version()) {
        std::printf("format versions %u and %u\n", ma.format_version(), mb.format_version());
        mb.set_format_version(ma.format_version());
      }
      if (!google::protobuf::util::MessageDifferencer::Equals(ma, mb)) {
        std::printf("metadata differs\n");
        ++differ;
      }
    } else if (ia->value() != ib->value()) {
      if ((ia->key()[0] == 'A' && SameArgs(ia->value(), ib->value())) ||
          (ia->key()[0] == 'Y' && SameSegment(ia->value(), ib->value()))) {
        ++reencoded;
        continue;
      }
      if (++differ <= 5) std::printf("record %zu (key %s) differs\n", records, ia->key().ToString().c_str());
    }
  }
  if (!ia->status().ok() || !ib->status().ok()) {
    std::fprintf(stderr, "read failed\n");
    return 2;
  }
  if (reencoded > 0) std::printf("%zu argument blocks or memory segments encoded differently, same contents\n", reencoded);
  std::printf("%zu records, %zu differ\n", records, differ);
  return differ == 0 ? 0 : 1;
}

// Snappy over 32 KiB runs of one prefix's records approximates what that
// prefix costs on disk (the files compress 32 KiB blocks).
struct PrefixSize {
  uint64_t records = 0, bytes = 0, compressed = 0;
  std::string pending;
  void Add(const leveldb::Slice& key, const leveldb::Slice& value) {
    ++records;
    bytes += key.size() + value.size();
    pending.append(key.data(), key.size()).append(value.data(), value.size());
    if (pending.size() >= 32768) Flush();
  }
  void Flush() {
    std::string out;
    snappy::Compress(pending.data(), pending.size(), &out);
    compressed += std::min(out.size(), pending.size());
    pending.clear();
  }
};

// Each tile field's share: the bytes a tile holding only that field takes.
void AddTileFields(const leveldb::Slice& value, char section, std::map<std::string, uint64_t>* by_field) {
  tracetable::proto::Tile tile;
  if (!tile.ParseFromArray(value.data(), static_cast<int>(value.size()))) return;
  const google::protobuf::Reflection* reflection = tile.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(tile, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    tracetable::proto::Tile only;
    only.CopyFrom(tile);
    for (const google::protobuf::FieldDescriptor* other : fields) {
      if (other != field) reflection->ClearField(&only, other);
    }
    (*by_field)[absl::StrCat(std::string(1, section), " ", field->name())] += only.ByteSizeLong();
  }
}

int Sizes(const std::string& dir) {
  auto t = tracetable::TableFiles::Open(dir, nullptr);
  if (!t.ok()) {
    std::fprintf(stderr, "cannot open: %s\n", t.status().ToString().c_str());
    return 2;
  }
  std::map<char, PrefixSize> by_prefix;
  std::map<std::string, uint64_t> tile_fields;
  std::map<std::string, PrefixSize> tile_levels;
  std::unique_ptr<leveldb::Iterator> it = (*t)->NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    by_prefix[it->key()[0]].Add(it->key(), it->value());
    if (it->key()[0] == 'T') {
      tracetable::TileKey key;
      if (tracetable::DecodeTileKey(std::string_view(it->key().data(), it->key().size()), &key)) {
        const char section = static_cast<char>(key.section);
        AddTileFields(it->value(), section, &tile_fields);
        std::string level = absl::StrCat(std::string(1, section), " level ", key.level);
        tile_levels[level].Add(it->key(), it->value());
      }
    }
  }
  if (!it->status().ok()) return 2;
  std::printf("prefix      records   bytes (keys + values)   snappy in 32 KiB runs\n");
  for (auto& [prefix, c] : by_prefix) {
    c.Flush();
    std::printf("%c %12llu %14llu %14llu\n", prefix, static_cast<unsigned long long>(c.records),
                static_cast<unsigned long long>(c.bytes), static_cast<unsigned long long>(c.compressed));
  }
  std::printf("tiles by section and level (records, bytes, snappy)\n");
  for (auto& [level, c] : tile_levels) {
    c.Flush();
    std::printf("  %-12s %8llu %12llu %12llu\n", level.c_str(), static_cast<unsigned long long>(c.records),
                static_cast<unsigned long long>(c.bytes), static_cast<unsigned long long>(c.compressed));
  }
  std::printf("tile fields by section (uncompressed, tags included)\n");
  for (const auto& [name, bytes] : tile_fields) std::printf("  %-14s %12llu\n", name.c_str(), static_cast<unsigned long long>(bytes));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--sizes") return Sizes(argv[2]);
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TABLE_A TABLE_B | --sizes TABLE\n", argv[0]);
    return 2;
  }
  return Diff(argv[1], argv[2]);
}
