#include "query/serve/tiles_api.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "format/absl_compat.h"
#include "query/tile_pack.h"
#include "query/tiles.h"

namespace tracetable::serve {
namespace {

const std::string* Get(const Params& p, const std::string& key) {
  auto it = p.find(key);
  return it == p.end() ? nullptr : &it->second;
}

// Tiles of levels that cut the table into at most about 8: the ones every
// viewer's first views ask for (a whole-span view of up to ~4,000 px), few
// enough to keep. Finer tiles are rarely asked twice and would only push
// them (and heavy windows) out of the cache.
bool IsCoarseTile(const Table& table, int level) {
  const int64_t span = table.meta().max_end() - table.meta().min_ts();
  return level >= 40 || TileWidth(level) * 8 >= span;  // 2^40 ns bins: days; no overflow below
}

}  // namespace

Reply TileReply(const Table& table, const Params& params, AnswerCache* cache) {
  TileRequest req;
  const std::string* level = Get(params, "level");
  if (!level || !absl::SimpleAtoi(Av(*level), &req.level)) {
    return ErrorReply(400, "level: expected an integer 0..52", "level");
  }
  const std::string* k = Get(params, "k");
  if (!k || !absl::SimpleAtoi(Av(*k), &req.k)) return ErrorReply(400, "k: expected an integer", "k");
  const std::string* tracks = Get(params, "tracks");
  if (!tracks) return ErrorReply(400, "tracks: expected track ids, e.g. tracks=3,7", "tracks");
  for (absl::string_view id : absl::StrSplit(Av(*tracks), ',')) {
    uint32_t t = 0;
    if (!absl::SimpleAtoi(id, &t) || t >= static_cast<uint32_t>(table.resources().tracks_size())) {
      return ErrorReply(400, absl::StrCat("no track '", id.substr(0, 32), "'"), "tracks");
    }
    req.tracks.push_back(t);
  }
  if (const std::string* v = Get(params, "v")) {
    if (!absl::SimpleAtoi(Av(*v), &req.version) ||
        (req.version != kTileVersion && req.version != kTileCompactVersion)) {
      return ErrorReply(400, absl::StrCat("v: expected ", kTileVersion, " or ", kTileCompactVersion), "v");
    }
  }
  const absl::Time t0 = absl::Now();
  const std::string etag = TileETag(table, req);
  const std::string key = absl::StrCat("tile ", etag);
  if (std::shared_ptr<const std::string> kept = cache ? cache->Find(key) : nullptr) {
    Reply r;
    r.body = *kept;
    r.content_type = "application/octet-stream";
    r.headers.emplace_back("ETag", etag);
    r.headers.emplace_back("Server-Timing",
                           absl::StrCat("cache;dur=", absl::FDivDuration(absl::Now() - t0, absl::Milliseconds(1))));
    return r;
  }
  absl::StatusOr<WindowResult> result = QueryTile(table, req);
  const absl::Time t1 = absl::Now();
  if (!result.ok()) {
    const absl::Status& s = result.status();
    if (absl::IsInvalidArgument(s)) {
      return ErrorReply(400, std::string(s.message()), req.tracks.empty() || req.tracks.size() > kMaxTileTracks
                                              ? "tracks" : "level");
    }
    if (absl::IsOutOfRange(s)) return ErrorReply(400, std::string(s.message()), "k");
    return ErrorReply(500, std::string(s.message()));
  }
  absl::StatusOr<std::string> body = EncodeTileAnswer(table, req, *result);
  if (!body.ok()) return ErrorReply(500, std::string(body.status().message()));
  if (cache && IsCoarseTile(table, req.level)) cache->Put(key, *body);
  Reply r;
  r.body = std::move(*body);
  r.content_type = "application/octet-stream";
  r.headers.emplace_back("ETag", etag);
  // Where a tile's time goes, for the browser's resource timing (the
  // viewer benchmark reads it): the window query, then the encoding.
  r.headers.emplace_back("Server-Timing",
                         absl::StrCat("query;dur=", absl::FDivDuration(t1 - t0, absl::Milliseconds(1)),
                                      ", encode;dur=", absl::FDivDuration(absl::Now() - t1, absl::Milliseconds(1))));
  return r;
}

}  // namespace tracetable::serve
