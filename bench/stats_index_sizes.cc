// tt_stats_index_sizes TABLE: where the bytes of a table's range aggregates
// ("B" records, docs/format.md "Range statistics") go, per level: records,
// name rows, rows of one event, rows whose slices have no children, parent
// entries and value bytes, and the bytes a compact encoding would take
// (names as deltas, times in units of the record's gcd, slices and self as
// differences, min/max only for rows of several slices; varints, before
// compression). Used to size the grid (docs/performance.md).
#include <cstdio>
#include <map>
#include <numeric>
#include <algorithm>
#include <string>

#include "format/stats_codec.h"
#include "leveldb/iterator.h"
#include "store/table.h"

using namespace tracetable;

namespace {

uint64_t VarintBytes(uint64_t v) {
  uint64_t n = 1;
  for (; v >= 128; v >>= 7) ++n;
  return n;
}

uint64_t CompactBytes(const StatsBucketData& d) {
  uint64_t unit = 0;
  for (const StatsNameRow& r : d.names) {
    for (int64_t t : {r.total, r.self, r.min, r.max}) unit = std::gcd(unit, static_cast<uint64_t>(t));
  }
  for (const auto& [id, time] : d.parents) unit = std::gcd(unit, static_cast<uint64_t>(time));
  unit = std::max<uint64_t>(unit, 1);
  uint64_t bytes = VarintBytes(unit) + VarintBytes(d.samples);
  uint32_t name = 0;
  for (const StatsNameRow& r : d.names) {
    bytes += VarintBytes(r.name - name) + VarintBytes(r.count) + VarintBytes(r.count - r.slices) +
             VarintBytes(static_cast<uint64_t>(r.total) / unit) +
             VarintBytes(static_cast<uint64_t>(r.total - r.self) / unit);
    if (r.slices > 1) {
      bytes += VarintBytes(static_cast<uint64_t>(r.min) / unit) + VarintBytes(static_cast<uint64_t>(r.max - r.min) / unit);
    }
    name = r.name;
  }
  uint64_t id = 0;
  for (const auto& [pid, time] : d.parents) {
    bytes += VarintBytes(pid - id) + VarintBytes(static_cast<uint64_t>(time) / unit);
    id = pid;
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TABLE\n", argv[0]);
    return 2;
  }
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(argv[1]);
  if (!t.ok()) {
    std::fprintf(stderr, "%s\n", std::string(t.status().message()).c_str());
    return 1;
  }
  struct Level {
    uint64_t records = 0, rows = 0, single = 0, leaf = 0, parents = 0, bytes = 0, compact = 0;
  };
  std::map<int, Level> levels;
  std::unique_ptr<leveldb::Iterator> it = (*t)->NewIterator();
  for (it->Seek(std::string(1, kStatsPrefix)); it->Valid() && it->key()[0] == kStatsPrefix; it->Next()) {
    const int level = static_cast<uint8_t>(it->key()[5]);
    absl::StatusOr<StatsBucketData> d =
        DecodeStatsBucket(std::string_view(it->value().data(), it->value().size()), (*t)->num_strings());
    if (!d.ok()) {
      std::fprintf(stderr, "%s\n", std::string(d.status().message()).c_str());
      return 1;
    }
    Level& l = levels[level];
    ++l.records;
    l.rows += d->names.size();
    l.parents += d->parents.size();
    l.bytes += it->value().size();
    l.compact += CompactBytes(*d);
    for (const StatsNameRow& r : d->names) {
      l.single += r.count == 1;
      l.leaf += r.self == r.total;
    }
  }
  const double events = static_cast<double>((*t)->meta().num_events());
  std::printf("level records rows one_event self=total parents bytes B/row B/event compact_B/row compact_B/event\n");
  Level sum;
  for (const auto& [j, l] : levels) {
    std::printf("%5d %7llu %9llu %9llu %9llu %8llu %11llu %5.1f %6.2f %5.1f %6.2f\n", j, (unsigned long long)l.records,
                (unsigned long long)l.rows, (unsigned long long)l.single, (unsigned long long)l.leaf,
                (unsigned long long)l.parents, (unsigned long long)l.bytes,
                static_cast<double>(l.bytes) / static_cast<double>(std::max<uint64_t>(l.rows, 1)),
                static_cast<double>(l.bytes) / events,
                static_cast<double>(l.compact) / static_cast<double>(std::max<uint64_t>(l.rows, 1)),
                static_cast<double>(l.compact) / events);
    sum.records += l.records;
    sum.rows += l.rows;
    sum.bytes += l.bytes;
    sum.compact += l.compact;
  }
  std::printf("total %7llu %9llu %41llu %5.1f %6.2f %5.1f %6.2f\n", (unsigned long long)sum.records,
              (unsigned long long)sum.rows, (unsigned long long)sum.bytes,
              static_cast<double>(sum.bytes) / static_cast<double>(std::max<uint64_t>(sum.rows, 1)),
              static_cast<double>(sum.bytes) / events,
              static_cast<double>(sum.compact) / static_cast<double>(std::max<uint64_t>(sum.rows, 1)),
              static_cast<double>(sum.compact) / events);
  return it->status().ok() ? 0 : 1;
}
