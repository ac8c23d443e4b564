// Tiles (query/tiles.h) checked against the brute-force window reference
// restricted to each tile's range and tracks, and the binary answer against
// the rows it encodes. Shared by the randomized and the real-trace tests.
#ifndef TRACETABLE_TESTS_QUERY_TILE_REFERENCE_H_
#define TRACETABLE_TESTS_QUERY_TILE_REFERENCE_H_

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "query/tile_pack.h"
#include "query/tiles.h"
#include "tests/query/window_reference.h"

namespace tracetable::testing {

// Encodes `res` in the request's layout, decodes it, and expects the same
// items and the strings they name.
inline void CheckLayoutRoundTrip(const Table& t, const TileRequest& req, const WindowResult& res) {
  absl::StatusOr<std::string> bytes = EncodeTileAnswer(t, req, res);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_EQ(bytes->size() % 8, 0u);
  absl::StatusOr<DecodedTile> d = DecodeTileAnswer(*bytes);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->level, req.level);
  EXPECT_EQ(d->start, req.k * TileWidth(req.level));
  EXPECT_EQ(d->width, TileWidth(req.level));
  EXPECT_EQ(d->resolution, TileResolution(req.level));
  EXPECT_EQ(d->bin, res.bin);
  ASSERT_EQ(d->items.size(), res.items.size());
  std::map<uint32_t, std::string> strings(d->strings.begin(), d->strings.end());
  const int64_t min_ts = t.meta().min_ts();
  for (size_t i = 0; i < res.items.size(); ++i) {
    const WindowItem& a = res.items[i];
    const WindowItem& b = d->items[i];
    const TileRow &x = a.row, &y = b.row;
    ASSERT_EQ(std::tie(a.track, a.summary, x.kind, x.lane, x.dur, x.name, x.cat, x.flags, x.id,
                       x.count, x.covered, x.longest_dur, x.flow_id, x.flow_out),
              std::tie(b.track, b.summary, y.kind, y.lane, y.dur, y.name, y.cat, y.flags, y.id,
                       y.count, y.covered, y.longest_dur, y.flow_id, y.flow_out))
        << "item " << i;
    ASSERT_EQ(x.ts, y.ts + min_ts) << "item " << i;
    ASSERT_EQ(x.value, y.value) << "item " << i;
    if (!x.flow_out) {
      ASSERT_EQ(x.flow_in, y.flow_in) << "item " << i;
    }
    for (uint32_t s : {x.name, x.cat}) {
      if (s != 0) {
        ASSERT_EQ(strings.at(s), t.String(s));
      }
    }
  }
  // Every cut of the answer is an error, never a shorter answer.
  for (size_t cut : {size_t{0}, size_t{8}, size_t{63}, bytes->size() / 2, bytes->size() - 8}) {
    if (cut >= bytes->size()) continue;
    EXPECT_FALSE(DecodeTileAnswer(std::string_view(*bytes).substr(0, cut)).ok()) << cut;
  }
}

// Both layouts round-trip, and the compact one unpacks to exactly the
// aligned one's bytes.
inline void CheckRoundTrip(const Table& t, TileRequest req, const WindowResult& res) {
  req.version = kTileVersion;
  CheckLayoutRoundTrip(t, req, res);
  absl::StatusOr<std::string> aligned = EncodeTileAnswer(t, req, res);
  req.version = kTileCompactVersion;
  CheckLayoutRoundTrip(t, req, res);
  absl::StatusOr<std::string> compact = EncodeTileAnswer(t, req, res);
  ASSERT_TRUE(aligned.ok() && compact.ok());
  absl::StatusOr<std::string> unpacked = UnpackTileAnswer(*compact);
  ASSERT_TRUE(unpacked.ok()) << unpacked.status();
  ASSERT_TRUE(*unpacked == *aligned) << "compact answer does not unpack to the aligned one";
}

// `tiles` random tiles (level, index, 1-3 tracks), plus the first and last
// tile of each level drawn, each compared with Reference() on its window.
inline void CheckTilesAgainst(const Table& t, const Trace& tr, uint32_t seed, int tiles) {
  std::mt19937_64 rng(seed * 104729 + 3);
  const int64_t min_ts = t.meta().min_ts();
  const int64_t span = t.meta().max_end() - min_ts;
  const uint32_t num_tracks = static_cast<uint32_t>(t.resources().tracks_size());
  int top = 0;
  while (top < kMaxTileLevel && TileWidth(top) < span) ++top;
  for (int n = 0; n < tiles; ++n) {
    TileRequest req;
    // Mostly tiles a viewer of the whole span and a few zooms in would ask for.
    req.level = std::max(0, top - static_cast<int>(rng() % 12));
    const int64_t last = span / TileWidth(req.level);
    switch (n % 4) {
      case 0: req.k = 0; break;
      case 1: req.k = last; break;
      default: req.k = static_cast<int64_t>(rng() % (last + 1)); break;
    }
    std::set<uint32_t> tracks;
    const int want = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < want; ++i) tracks.insert(static_cast<uint32_t>(rng() % num_tracks));
    req.tracks.assign(tracks.begin(), tracks.end());
    absl::StatusOr<WindowResult> res = QueryTile(t, req);
    ASSERT_TRUE(res.ok()) << res.status();
    const WindowRequest w = TileWindow(t, req);
    EXPECT_EQ(w.start, min_ts + req.k * TileWidth(req.level));
    EXPECT_EQ(w.end - w.start + 1, TileWidth(req.level));
    std::multiset<Key> expected;
    for (const Key& k : Reference(tr, min_ts, w, res->level)) {
      if (tracks.count(std::get<0>(k))) expected.insert(k);
    }
    const std::multiset<Key> got = Answer(*res);
    ASSERT_EQ(got.size(), expected.size())
        << "seed " << seed << " tile " << n << " level " << req.level << " k " << req.k;
    ASSERT_TRUE(got == expected) << "seed " << seed << " tile " << n;
    CheckRoundTrip(t, req, *res);
  }
}

}  // namespace tracetable::testing

#endif  // TRACETABLE_TESTS_QUERY_TILE_REFERENCE_H_
