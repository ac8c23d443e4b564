// Window queries: what a viewer needs to draw [start, end] at a resolution.
//
// Contract (checked against a brute-force reference in tests/query):
//  - every event overlapping [start, end] with dur >= resolution is returned
//    exactly;
//  - every shorter overlapping event is returned or covered by a summary item
//    on its track and lane: events shorter than the resolution are grouped by
//    (bin of width Q, kind, lane), where Q = m * Resolution(level) is the
//    smallest multiple of the level's resolution not below the requested one;
//    a group that overlaps the window is returned as its single event, or as
//    a summary whose count is exactly the number of events in the group;
//  - counters: per bin, the first, min, max and last samples (peaks kept),
//    and the last sample before the window (or its first bin): the value in
//    effect where the window starts;
//  - at resolution > 0, items per track and lane are bounded by about
//    (end - start) / resolution + 3 per kind, whatever the trace size;
//  - at resolution 0 every event in the window is returned; a limit cuts the
//    answer in time order and sets `truncated`.
#ifndef TRACETABLE_QUERY_WINDOW_H_
#define TRACETABLE_QUERY_WINDOW_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "format/tile_codec.h"
#include "store/table.h"

namespace tracetable {

struct WindowRequest {
  int64_t start = 0;       // relative ps
  int64_t end = 0;         // relative ps, inclusive
  int64_t resolution = 0;  // ps; 0 = every event
  std::vector<uint32_t> tracks;  // empty = all tracks
  uint64_t limit = 0;            // 0 = none
};

struct WindowItem {
  uint32_t track = 0;
  bool summary = false;  // row.count > 1
  TileRow row;
};

struct WindowResult {
  int level = 0;
  int64_t bin = 0;  // Q, the width summaries are grouped by (ps)
  std::vector<WindowItem> items;  // sorted by (track, ts)
  uint64_t events = 0;
  uint64_t summaries = 0;
  bool truncated = false;
  uint64_t total_items = 0;  // before the limit cut them
  ReadStats stats;
};

absl::StatusOr<WindowResult> QueryWindow(const Table& table, const WindowRequest& request);

// The bin width a query at `resolution` groups short events by, at `level`.
int64_t SummaryBinWidth(int64_t resolution, int level);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_WINDOW_H_
