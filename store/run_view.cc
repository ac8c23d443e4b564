#include "store/run_view.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "format/absl_compat.h"
#include "format/varint.h"
#include "store/fixed_coding.h"
#include "store/meta_check.h"
#include "store/run_manifest.h"
#include "store/table.h"

namespace tracetable {
namespace {

// RUN.view = magic, u32 LE payload length, u32 LE CRC-32 (zlib) of the
// payload, then the payload (docs/format.md).
constexpr std::string_view kMagic = "tracetable view\n";
constexpr size_t kHeader = 16 + 4 + 4;




absl::Status Corrupt(std::string_view why) { return absl::DataLossError(absl::StrCat("corrupt run view: ", Av(why))); }

void PutIds(std::string* out, const std::vector<uint32_t>& ids) {
  std::string b;
  for (uint32_t id : ids) AppendVarint(&b, id);
  AppendLengthPrefixed(out, b);
}

bool GetIds(std::string_view s, size_t* pos, size_t limit, std::vector<uint32_t>* ids) {
  std::string_view b;
  if (!GetLengthPrefixed(s, pos, &b)) return false;
  for (size_t at = 0; at < b.size();) {
    uint64_t v = 0;
    if (!ReadVarint(b, &at, &v) || v >= limit) return false;
    ids->push_back(static_cast<uint32_t>(v));
  }
  return true;
}

absl::StatusOr<ViewShard> DecodeShard(std::string_view s, size_t* pos, size_t num_strings, uint64_t version) {
  std::string_view id, meta, resources, coarse;
  ViewShard h;
  if (!GetLengthPrefixed(s, pos, &id) || !GetLengthPrefixed(s, pos, &meta) || !GetLengthPrefixed(s, pos, &resources) ||
      !GetIds(s, pos, num_strings, &h.strings) || !GetIds(s, pos, num_strings, &h.async_strings) ||
      (version >= 2 && !GetLengthPrefixed(s, pos, &coarse))) {
    return Corrupt("a shard's entry is cut short or maps outside the string table");
  }
  h.identity = std::string(id);
  if (!h.meta.ParseFromArray(meta.data(), static_cast<int>(meta.size())) ||
      !h.resources.ParseFromArray(resources.data(), static_cast<int>(resources.size()))) {
    return Corrupt(absl::StrCat("the entry of shard ", h.identity, " does not parse"));
  }
  // As a table's own metadata is checked before use (store/table.cc).
  const std::string where = absl::StrCat("run view entry ", h.identity);
  if (absl::Status st = CheckTableMeta(where, h.meta); !st.ok()) return Corrupt(Sv(st.message()));
  if (absl::Status st = CheckResources(where, h.meta, h.resources); !st.ok()) return Corrupt(Sv(st.message()));
  if (h.strings.size() != h.meta.num_strings() || h.strings.empty() || h.strings[0] != 0 || h.identity.empty() ||
      (!h.async_strings.empty() && h.async_strings.size() != h.strings.size())) {
    return Corrupt(absl::StrCat("the entry of shard ", h.identity, " disagrees with its metadata"));
  }
  h.coarse_known = version >= 2;
  absl::StatusOr<std::shared_ptr<const CoarseTiles>> c = ParseCoarseTiles(std::string(coarse), h.meta, h.resources);
  if (!c.ok()) return Corrupt(absl::StrCat("the entry of shard ", h.identity, ": ", c.status().message()));
  h.coarse = *std::move(c);
  return h;
}

}  // namespace

RunStrings::RunStrings(std::vector<std::string> prefix) : strings_(std::move(prefix)) {
  ids_.reserve(strings_.size());
  for (size_t i = 0; i < strings_.size(); ++i) ids_.emplace(strings_[i], static_cast<uint32_t>(i));
}

uint32_t RunStrings::Intern(std::string_view s) {
  if (auto it = ids_.find(Av(s)); it != ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  ids_.emplace(std::string(s), id);
  strings_.emplace_back(s);
  return id;
}

void RunStrings::AddShard(size_t index, const std::vector<std::string>& local, bool async,
                          std::vector<uint32_t>* map, std::vector<uint32_t>* async_map) {
  map->resize(local.size());
  for (size_t k = 0; k < local.size(); ++k) (*map)[k] = Intern(local[k]);
  // One ingest of several inputs keys the async slices of input N > 0 as
  // "key|input N" (store/table_builder.cc, InputAsyncKey).
  async_map->clear();
  if (index == 0 || !async) return;
  async_map->resize(local.size());
  for (size_t k = 1; k < local.size(); ++k) (*async_map)[k] = Intern(absl::StrCat(local[k], "|input ", index));
}

void RunStrings::AddMapped(size_t index, const std::vector<std::string>& old, const std::vector<uint32_t>& local,
                           bool async, std::vector<uint32_t>* seen, std::vector<uint32_t>* map,
                           std::vector<uint32_t>* async_map) {
  map->resize(local.size());
  for (size_t k = 0; k < local.size(); ++k) {
    uint32_t& id = (*seen)[local[k]];
    if (id == UINT32_MAX) id = Intern(old[local[k]]);
    (*map)[k] = id;
  }
  async_map->clear();
  if (index == 0 || !async) return;
  async_map->resize(local.size());
  for (size_t k = 1; k < local.size(); ++k) (*async_map)[k] = Intern(absl::StrCat(old[local[k]], "|input ", index));
}

bool HasAsyncTracks(const proto::ResourceTable& resources) {
  return std::any_of(resources.tracks().begin(), resources.tracks().end(),
                     [](const proto::Track& tr) { return tr.kind() == proto::Track::ASYNC; });
}

const ViewShard* RunView::Find(std::string_view identity) const {
  auto it = by_identity_.find(Av(identity));
  return it == by_identity_.end() ? nullptr : &shards[it->second];
}

bool RunView::Matches(const std::vector<std::string>& identities) const {
  if (identities.size() != shards.size()) return false;
  for (size_t i = 0; i < shards.size(); ++i) {
    if (shards[i].identity != identities[i]) return false;
  }
  return true;
}

std::vector<std::string> RunView::LocalStrings(const ViewShard& shard) const {
  std::vector<std::string> out;
  out.reserve(shard.strings.size());
  for (uint32_t id : shard.strings) out.push_back(strings[id]);
  return out;
}

void RunView::Index() {
  by_identity_.clear();
  for (size_t i = 0; i < shards.size(); ++i) by_identity_.emplace(shards[i].identity, i);
}

std::string EncodeRunView(const RunView& view, uint32_t version) {
  std::string p;
  AppendVarint(&p, version);
  AppendLengthPrefixed(&p, view.run_id);
  AppendVarint(&p, view.generation);
  proto::StringChunk chunk;
  for (const std::string& s : view.strings) chunk.add_strings(s);
  AppendLengthPrefixed(&p, chunk.SerializeAsString());
  AppendVarint(&p, view.shards.size());
  for (const ViewShard& h : view.shards) {
    AppendLengthPrefixed(&p, h.identity);
    AppendLengthPrefixed(&p, h.meta.SerializeAsString());
    AppendLengthPrefixed(&p, h.resources.SerializeAsString());
    PutIds(&p, h.strings);
    PutIds(&p, h.async_strings);
    if (version >= 2) AppendLengthPrefixed(&p, h.coarse ? std::string_view(h.coarse->bytes()) : std::string_view());
  }
  std::string out(kMagic);
  PutFixed32(&out, static_cast<uint32_t>(p.size()));
  PutFixed32(&out, Crc32(p));
  out += p;
  return out;
}

absl::StatusOr<RunView> DecodeRunView(std::string_view bytes) {
  if (bytes.size() < kHeader || bytes.substr(0, kMagic.size()) != kMagic) return Corrupt("bad magic");
  const std::string_view p = bytes.substr(kHeader);
  if (GetFixed32(bytes.substr(16)) != p.size()) return Corrupt("length does not match the file");
  if (GetFixed32(bytes.substr(20)) != Crc32(p)) return Corrupt("checksum mismatch");
  size_t pos = 0;
  uint64_t version = 0, count = 0;
  RunView v;
  std::string_view run_id, strings;
  if (!ReadVarint(p, &pos, &version)) return Corrupt("cut short");
  // Version 1 is version 2 without the entries' coarse tiles.
  if (version != 1 && version != kRunViewFormatVersion) {
    return Corrupt(absl::StrCat("format version ", version, " (this tracetable reads 1 and ", kRunViewFormatVersion,
                                ")"));
  }
  proto::StringChunk chunk;
  if (!GetLengthPrefixed(p, &pos, &run_id) || !ReadVarint(p, &pos, &v.generation) || !GetLengthPrefixed(p, &pos, &strings) ||
      !ReadVarint(p, &pos, &count) || count > p.size()) {
    return Corrupt("cut short");
  }
  if (!chunk.ParseFromArray(strings.data(), static_cast<int>(strings.size())) || chunk.strings_size() == 0 ||
      !chunk.strings(0).empty()) {
    return Corrupt("the string table does not parse");
  }
  v.run_id = std::string(run_id);
  v.strings.assign(std::make_move_iterator(chunk.mutable_strings()->begin()),
                   std::make_move_iterator(chunk.mutable_strings()->end()));
  v.shards.reserve(count);
  for (uint64_t k = 0; k < count; ++k) {
    absl::StatusOr<ViewShard> h = DecodeShard(p, &pos, v.strings.size(), version);
    if (!h.ok()) return h.status();
    v.shards.push_back(*std::move(h));
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

namespace {

// How many leading shards of `manifest` are old's first ones, in order.
size_t SamePrefix(const RunManifest& manifest, const RunView& old) {
  size_t k = 0;
  while (k < manifest.shards.size() && k < old.shards.size() && old.shards[k].identity == manifest.shards[k].table_id) {
    ++k;
  }
  return k;
}

// The strings the first `k` entries of `old` use: interning is in shard
// order, so they are the table's first 1 + (largest id they map to).
std::vector<std::string> UsedPrefix(const RunView& old, size_t k) {
  uint32_t top = 0;
  for (size_t i = 0; i < k; ++i) {
    for (const std::vector<uint32_t>* m : {&old.shards[i].strings, &old.shards[i].async_strings}) {
      for (uint32_t id : *m) top = std::max(top, id);
    }
  }
  return std::vector<std::string>(old.strings.begin(), old.strings.begin() + top + 1);
}

// The shard's coarse tiles, copied from it. A shard whose tiles do not read
// gets none: reads of those levels go to it and meet the damage there.
void SetCoarse(const Table& t, ViewShard* h) {
  h->coarse_known = true;
  h->coarse = nullptr;
  absl::StatusOr<std::string> bytes = CollectCoarseTiles(t);
  if (!bytes.ok()) return;
  absl::StatusOr<std::shared_ptr<const CoarseTiles>> c = ParseCoarseTiles(*std::move(bytes), h->meta, h->resources);
  if (c.ok()) h->coarse = *std::move(c);
}

// An entry kept from a version-1 view has no coarse tiles: the shard is
// opened once to collect them.
void CollectMissingCoarse(const std::string& run_path, const RunShardInfo& s, ViewShard* h) {
  if (h->coarse_known) return;
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(absl::StrCat(run_path, "/", s.dir));
  if (!t.ok() || (*t)->identity() != h->identity) return;
  SetCoarse(**t, h);
}

}  // namespace

RunView MakeRunView(const std::string& run_path, const RunManifest& manifest, RunView* old) {
  RunView v;
  v.run_id = manifest.run_id;
  v.generation = manifest.generation;
  const size_t kept = old ? SamePrefix(manifest, *old) : 0;
  RunStrings strings = kept > 0 ? RunStrings(UsedPrefix(*old, kept)) : RunStrings();
  for (size_t i = 0; i < kept; ++i) {
    v.shards.push_back(std::move(old->shards[i]));
    CollectMissingCoarse(run_path, manifest.shards[i], &v.shards.back());
  }
  std::vector<uint32_t> seen(old ? old->strings.size() : 0, UINT32_MAX);
  for (size_t i = kept; i < manifest.shards.size(); ++i) {
    const RunShardInfo& s = manifest.shards[i];
    const ViewShard* o = old ? old->Find(s.table_id) : nullptr;
    if (o != nullptr && !o->identity.empty()) {
      ViewShard h = std::move(old->shards[static_cast<size_t>(o - old->shards.data())]);
      const std::vector<uint32_t> local = std::move(h.strings);
      strings.AddMapped(i, old->strings, local, HasAsyncTracks(h.resources), &seen, &h.strings, &h.async_strings);
      CollectMissingCoarse(run_path, s, &h);
      v.shards.push_back(std::move(h));
      continue;
    }
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(absl::StrCat(run_path, "/", s.dir));
    if (!t.ok() || (*t)->identity() != s.table_id) continue;
    ViewShard h;
    h.identity = (*t)->identity();
    h.meta = (*t)->meta();
    h.resources = (*t)->resources();
    std::vector<std::string> local;
    for (size_t k = 0; k < (*t)->num_strings(); ++k) local.emplace_back((*t)->String(static_cast<uint32_t>(k)));
    strings.AddShard(i, local, HasAsyncTracks(h.resources), &h.strings, &h.async_strings);
    SetCoarse(**t, &h);
    v.shards.push_back(std::move(h));
  }
  v.strings = strings.Take();
  v.Index();
  return v;
}

}  // namespace tracetable
