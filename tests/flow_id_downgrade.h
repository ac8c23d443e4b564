// DowngradeFlowIds: rewrites a table of version 7 or later as version 6
// wrote its flow ids, every numeric flow id (format/flow_id.h) a string: its
// decimal text is appended to the string table, event tiles name that string
// id instead, the flow index is keyed by it, and the version is 6. For tests
// of how tables and runs written before numeric flow ids read (no older
// binary is at hand). What version 8 added to save space stays: readers
// take it at any version.
#ifndef TRACETABLE_TESTS_FLOW_ID_DOWNGRADE_H_
#define TRACETABLE_TESTS_FLOW_ID_DOWNGRADE_H_

#include <cstdint>
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "format/flow_id.h"
#include "format/keys.h"
#include "format/tile_codec.h"
#include "format/tracetable.pb.h"
#include "gtest/gtest.h"
#include "store/meta_check.h"
#include "tests/table_edit.h"

namespace tracetable {

inline void DowngradeFlowIds(const std::string& path) {
  EditTable(path, [](std::map<std::string, std::string>* records) {
    proto::TableMeta meta;
    ASSERT_TRUE(meta.ParseFromString((*records)[kMetaKey]));
    ASSERT_GE(meta.format_version(), 7u);
    std::vector<std::string> strings;
    for (uint32_t c = 0; c < meta.num_string_chunks(); ++c) {
      proto::StringChunk chunk;
      ASSERT_TRUE(chunk.ParseFromString((*records)[StringChunkKey(c)]));
      for (const std::string& s : chunk.strings()) strings.push_back(s);
    }
    absl::flat_hash_map<uint32_t, uint32_t> string_of;  // numeric flow id -> new string id
    auto as_string = [&](uint32_t id) {
      if (!IsNumericFlowId(id)) return id;
      auto [it, inserted] = string_of.try_emplace(id, static_cast<uint32_t>(strings.size()));
      if (inserted) strings.push_back(NumericFlowIdText(id));
      return it->second;
    };
    // Flow index entries by flow id, as (track, level, start), read before
    // any is renumbered.
    std::map<uint32_t, std::vector<std::tuple<uint32_t, uint32_t, uint64_t>>> flows;
    for (auto it = records->begin(); it != records->end();) {
      if (it->first[0] != kFlowPrefix) {
        ++it;
        continue;
      }
      const uint32_t block = GetBigEndian32(it->first.data() + 1);
      proto::FlowTiles b;
      ASSERT_TRUE(b.ParseFromString(it->second));
      int at = 0;
      for (int k = 0; k < b.slot_size(); at += static_cast<int>(b.count(k)), ++k) {
        auto& tiles = flows[(block << kFlowBlockShift) | b.slot(k)];
        for (int e = at; e < at + static_cast<int>(b.count(k)); ++e) tiles.emplace_back(b.track(e), b.level(e), b.start(e));
      }
      it = records->erase(it);
    }
    for (auto& [key, value] : *records) {
      TileKey tk;
      if (key[0] != kTilePrefix || !DecodeTileKey(key, &tk) || tk.section != TileSection::kEvents) continue;
      const int64_t start = meta.min_ts() + static_cast<int64_t>(tk.start);
      std::vector<TileRow> rows;
      ASSERT_TRUE(DecodeTile(value, start, &rows).ok());
      bool changed = false;
      for (TileRow& r : rows) {
        for (uint32_t* f : {&r.flow_id, &r.flow_out, &r.flow_in}) {
          const uint32_t s = as_string(*f);
          changed |= s != *f;
          *f = s;
        }
      }
      if (changed) value = EncodeTile(rows, start, /*summary=*/false);
    }
    std::map<uint32_t, const std::vector<std::tuple<uint32_t, uint32_t, uint64_t>>*> by_id;
    for (const auto& [flow, tiles] : flows) by_id[as_string(flow)] = &tiles;
    std::map<uint32_t, proto::FlowTiles> blocks;
    for (const auto& [id, tiles_of] : by_id) {
      const auto& tiles = *tiles_of;
      proto::FlowTiles& b = blocks[id >> kFlowBlockShift];
      b.add_slot(id & ((1u << kFlowBlockShift) - 1));
      b.add_count(static_cast<uint32_t>(tiles.size()));
      for (const auto& [track, level, tile_start] : tiles) {
        b.add_track(track);
        b.add_level(level);
        b.add_start(tile_start);
      }
    }
    uint64_t bytes = 0;
    for (const auto& [block, b] : blocks) {
      (*records)[FlowBlockKey(block)] = b.SerializeAsString();
      bytes += b.ByteSizeLong();
    }
    for (uint32_t c = 0; c < meta.num_string_chunks(); ++c) records->erase(StringChunkKey(c));
    uint32_t chunks = 0;
    for (size_t first = 0; first < strings.size(); first += kStringsPerChunk, ++chunks) {
      proto::StringChunk chunk;
      for (size_t i = first; i < std::min(strings.size(), first + kStringsPerChunk); ++i) chunk.add_strings(strings[i]);
      (*records)[StringChunkKey(chunks)] = chunk.SerializeAsString();
    }
    meta.set_num_strings(strings.size());
    meta.set_num_string_chunks(chunks);
    meta.mutable_flow_index()->set_blocks(blocks.size());
    meta.mutable_flow_index()->set_bytes(bytes);
    meta.set_format_version(6);
    (*records)[kMetaKey] = meta.SerializeAsString();
  });
}

}  // namespace tracetable

#endif  // TRACETABLE_TESTS_FLOW_ID_DOWNGRADE_H_
