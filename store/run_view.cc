#include "store/run_view.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/varint.h"
#include "store/meta_check.h"
#include "store/run_manifest.h"
#include "store/table.h"
#include "zlib.h"

namespace tracetable {
namespace {

// RUN.view = magic, u32 LE payload length, u32 LE CRC-32 (zlib) of the
// payload, then the payload (docs/format.md).
constexpr std::string_view kMagic = "tracetable view\n";
constexpr size_t kHeader = 16 + 4 + 4;

uint32_t Crc(std::string_view b) {
  return static_cast<uint32_t>(
      crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(b.data()), static_cast<uInt>(b.size())));
}

void PutU32(std::string* out, uint32_t v) {
  for (int k = 0; k < 4; ++k) out->push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}

uint32_t GetU32(std::string_view b) {
  uint32_t v = 0;
  for (int k = 3; k >= 0; --k) v = (v << 8) | static_cast<uint8_t>(b[k]);
  return v;
}

void PutBytes(std::string* out, std::string_view b) {
  AppendVarint(out, b.size());
  out->append(b);
}

bool GetBytes(std::string_view s, size_t* pos, std::string_view* b) {
  uint64_t n = 0;
  if (!ReadVarint(s, pos, &n) || n > s.size() - *pos) return false;
  *b = s.substr(*pos, n);
  *pos += n;
  return true;
}

absl::Status Corrupt(std::string_view why) { return absl::DataLossError(absl::StrCat("corrupt run view: ", Av(why))); }

absl::StatusOr<ShardHead> DecodeHead(std::string_view s, size_t* pos) {
  std::string_view id, meta, resources, strings;
  if (!GetBytes(s, pos, &id) || !GetBytes(s, pos, &meta) || !GetBytes(s, pos, &resources) ||
      !GetBytes(s, pos, &strings)) {
    return Corrupt("a shard's entry is cut short");
  }
  ShardHead h;
  h.identity = std::string(id);
  proto::StringChunk chunk;
  if (!h.meta.ParseFromArray(meta.data(), static_cast<int>(meta.size())) ||
      !h.resources.ParseFromArray(resources.data(), static_cast<int>(resources.size())) ||
      !chunk.ParseFromArray(strings.data(), static_cast<int>(strings.size()))) {
    return Corrupt(absl::StrCat("the entry of shard ", h.identity, " does not parse"));
  }
  h.strings.assign(chunk.strings().begin(), chunk.strings().end());
  // As a table's own metadata is checked before use (store/table.cc).
  const std::string where = absl::StrCat("run view entry ", h.identity);
  if (absl::Status st = CheckTableMeta(where, h.meta); !st.ok()) return Corrupt(Sv(st.message()));
  if (absl::Status st = CheckResources(where, h.meta, h.resources); !st.ok()) return Corrupt(Sv(st.message()));
  if (h.strings.size() != h.meta.num_strings() || h.strings.empty() || !h.strings[0].empty() ||
      h.identity.empty()) {
    return Corrupt(absl::StrCat("the entry of shard ", h.identity, " disagrees with its metadata"));
  }
  return h;
}

}  // namespace

ShardHead HeadOf(const Table& table) {
  ShardHead h;
  h.identity = table.identity();
  h.meta = table.meta();
  h.resources = table.resources();
  h.strings.reserve(table.num_strings());
  for (size_t k = 0; k < table.num_strings(); ++k) h.strings.emplace_back(table.String(static_cast<uint32_t>(k)));
  return h;
}

const ShardHead* RunView::Find(std::string_view identity) const {
  auto it = by_identity_.find(Av(identity));
  return it == by_identity_.end() ? nullptr : &heads[it->second];
}

void RunView::Index() {
  by_identity_.clear();
  for (size_t i = 0; i < heads.size(); ++i) by_identity_.emplace(heads[i].identity, i);
}

std::string EncodeRunView(const RunView& view) {
  std::string p;
  AppendVarint(&p, kRunViewFormatVersion);
  PutBytes(&p, view.run_id);
  AppendVarint(&p, view.generation);
  AppendVarint(&p, view.heads.size());
  for (const ShardHead& h : view.heads) {
    PutBytes(&p, h.identity);
    PutBytes(&p, h.meta.SerializeAsString());
    PutBytes(&p, h.resources.SerializeAsString());
    proto::StringChunk chunk;
    for (const std::string& s : h.strings) chunk.add_strings(s);
    PutBytes(&p, chunk.SerializeAsString());
  }
  std::string out(kMagic);
  PutU32(&out, static_cast<uint32_t>(p.size()));
  PutU32(&out, Crc(p));
  out += p;
  return out;
}

absl::StatusOr<RunView> DecodeRunView(std::string_view bytes) {
  if (bytes.size() < kHeader || bytes.substr(0, kMagic.size()) != kMagic) return Corrupt("bad magic");
  const std::string_view p = bytes.substr(kHeader);
  if (GetU32(bytes.substr(16)) != p.size()) return Corrupt("length does not match the file");
  if (GetU32(bytes.substr(20)) != Crc(p)) return Corrupt("checksum mismatch");
  size_t pos = 0;
  uint64_t version = 0, count = 0;
  RunView v;
  std::string_view run_id;
  if (!ReadVarint(p, &pos, &version)) return Corrupt("cut short");
  if (version != kRunViewFormatVersion) {
    return Corrupt(absl::StrCat("format version ", version, " (this tracetable reads ", kRunViewFormatVersion, ")"));
  }
  if (!GetBytes(p, &pos, &run_id) || !ReadVarint(p, &pos, &v.generation) || !ReadVarint(p, &pos, &count) ||
      count > p.size()) {
    return Corrupt("cut short");
  }
  v.run_id = std::string(run_id);
  v.heads.reserve(count);
  for (uint64_t k = 0; k < count; ++k) {
    absl::StatusOr<ShardHead> h = DecodeHead(p, &pos);
    if (!h.ok()) return h.status();
    v.heads.push_back(*std::move(h));
  }
  if (pos != p.size()) return Corrupt("bytes after the last entry");
  v.Index();
  return v;
}

absl::StatusOr<RunView> ReadRunView(const std::string& run_path) {
  const std::string path = absl::StrCat(run_path, "/", kRunViewFileName);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": no run view"));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": corrupt run view: read error"));
  absl::StatusOr<RunView> v = DecodeRunView(bytes.view());
  if (!v.ok()) return absl::DataLossError(absl::StrCat(path, ": ", v.status().message()));
  return v;
}

RunView MakeRunView(const std::string& run_path, const RunManifest& manifest, const RunView* old) {
  RunView v;
  v.run_id = manifest.run_id;
  v.generation = manifest.generation;
  for (const RunShardInfo& s : manifest.shards) {
    if (const ShardHead* h = old ? old->Find(s.table_id) : nullptr) {
      v.heads.push_back(*h);
      continue;
    }
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(absl::StrCat(run_path, "/", s.dir));
    if (t.ok() && (*t)->identity() == s.table_id) v.heads.push_back(HeadOf(**t));
  }
  v.Index();
  return v;
}

}  // namespace tracetable
