// Zoom levels and duration classes.
//
// Level k >= 1 has resolution Resolution(k) = 1 ns * 8^(k-1) (in ps); level 0
// has resolution 0. An event of duration d belongs to exactly one duration
// class: the largest k with Resolution(k) <= d (class 0 for d < 1 ns). Level k
// also has summary tiles (if HasSummaryTiles(k)): for every bin of width
// Resolution(k), per lane and kind, the groups of two or more events shorter
// than Resolution(k). Each event is stored once, at a storage level >= its
// class (store/track_writer.h).
//
// A query at resolution R reads level L = LevelForResolution(R): the events
// stored at levels >= S and the summaries of level S, S = SummarySource(L)
// (L itself, or L - 1 where L keeps no summary tiles). Tiles are cut by row
// count (kMaxRowsPerTile), not by time, so sparse tracks make few tiles and
// dense ones small tiles: a window reads about (rows in it) /
// kMaxRowsPerTile + 2 tiles per level.
#ifndef TRACETABLE_FORMAT_LEVELS_H_
#define TRACETABLE_FORMAT_LEVELS_H_

#include <cstddef>
#include <cstdint>

namespace tracetable {

// Each level is 2^kLevelShift times coarser than the one below.
constexpr int kLevelShift = 3;
constexpr int kMaxLevels = 16;  // Resolution(15) = 8^14 ns ~ 12 h
constexpr size_t kMaxRowsPerTile = 256;

constexpr int64_t Resolution(int level) {
  return level <= 0 ? 0 : int64_t{1000} << (kLevelShift * (level - 1));
}

// Levels below kAllSummariesFrom keep summary tiles only every other level
// (1, 2, 4): they hold most of the summary rows but few events per bin, so a
// query there reads the next finer level's summaries instead and folds 8 of
// its bins into one at little cost. Coarser levels hold few rows and full
// bins, so each keeps its own.
constexpr int kAllSummariesFrom = 6;

constexpr bool HasSummaryTiles(int level) {
  return level >= 1 && (level <= 2 || level % 2 == 0 || level >= kAllSummariesFrom);
}

// The level whose summary tiles a query at `level` reads; it also reads the
// event tiles of every level from this one up.
constexpr int SummarySource(int level) {
  return level == 0 || HasSummaryTiles(level) ? level : level - 1;
}

// Class of a duration in ps, capped at num_levels - 1.
int DurationClass(int64_t dur_ps, int num_levels);

// Level a query at resolution `res_ps` reads: the largest level whose
// resolution is <= res_ps, capped at num_levels - 1.
int LevelForResolution(int64_t res_ps, int num_levels);

// Number of levels for a table whose events span `span_ps`: enough that the
// top level's resolution covers the whole span.
int NumLevelsForSpan(int64_t span_ps);

}  // namespace tracetable

#endif  // TRACETABLE_FORMAT_LEVELS_H_
