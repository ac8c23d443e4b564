// tt_stats_index_sizes TABLE: where the bytes of a table's range aggregates
// ("B" records, docs/format.md "Range statistics") go, per level: records,
// name rows, rows of one event, rows whose slices have no children, parent
// entries and value bytes. Used to size the grid (docs/performance.md).
#include <cstdio>
#include <map>
#include <algorithm>
#include <string>

#include "format/stats_codec.h"
#include "leveldb/iterator.h"
#include "store/table.h"

using namespace tracetable;

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
    uint64_t records = 0, rows = 0, single = 0, leaf = 0, parents = 0, bytes = 0;
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
    for (const StatsNameRow& r : d->names) {
      l.single += r.count == 1;
      l.leaf += r.self == r.total;
    }
  }
  const double events = static_cast<double>((*t)->meta().num_events());
  std::printf("level records rows one_event self=total parents bytes B/row B/event\n");
  Level sum;
  for (const auto& [j, l] : levels) {
    std::printf("%5d %7llu %9llu %9llu %9llu %8llu %11llu %5.1f %6.2f\n", j, (unsigned long long)l.records,
                (unsigned long long)l.rows, (unsigned long long)l.single, (unsigned long long)l.leaf,
                (unsigned long long)l.parents, (unsigned long long)l.bytes,
                static_cast<double>(l.bytes) / static_cast<double>(std::max<uint64_t>(l.rows, 1)),
                static_cast<double>(l.bytes) / events);
    sum.records += l.records;
    sum.rows += l.rows;
    sum.bytes += l.bytes;
  }
  std::printf("total %7llu %9llu %41llu %5.1f %6.2f\n", (unsigned long long)sum.records, (unsigned long long)sum.rows,
              (unsigned long long)sum.bytes, static_cast<double>(sum.bytes) / static_cast<double>(std::max<uint64_t>(sum.rows, 1)),
              static_cast<double>(sum.bytes) / events);
  return it->status().ok() ? 0 : 1;
}
