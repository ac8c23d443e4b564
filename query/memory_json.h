// JSON for memory profile answers, shared by `tracetable memory --json` and
// GET /api/tables/{t}/memory (docs/api.md has the shapes). Times are absolute
// microseconds as exact decimal numbers, like every other answer; addresses
// are hex strings (JavaScript numbers cannot hold 64-bit addresses).
#ifndef TRACETABLE_QUERY_MEMORY_JSON_H_
#define TRACETABLE_QUERY_MEMORY_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "query/memory.h"
#include "store/table.h"

namespace tracetable {

// One memory ID's summary object.
void AppendMemoryIdJson(const Table& table, uint32_t id, std::string* out);

// A breakdown object; at most `limit` rows (0 = all), "rows_total" says how
// many there are and the totals always cover all of them.
void AppendMemoryBreakdownJson(const Table& table, const MemoryBreakdown& b, uint64_t limit,
                               std::string* out);

// {"id":...,"series":[{"name":..,"samples":[[ts_us,value],..]},..]}
void AppendMemoryTimelineJson(const Table& table, uint32_t id, const std::vector<MemorySeries>& series,
                              std::string* out);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_MEMORY_JSON_H_
