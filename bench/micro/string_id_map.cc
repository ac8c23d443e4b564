// Micro-benchmark: a parse worker's string lookups (store/string_id_map.h)
// against a map whose keys view texts stored elsewhere, as ProducerSink
// held them before. 100k names shaped like XLA ops ("fusion.1234"), looked
// up in random order with a prefetch a few lookups ahead (the parser hints
// each name before it interns it), and a write to a 256 KiB buffer between
// lookups standing for the rest of the parser's work.
#include <benchmark/benchmark.h>

#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "format/absl_compat.h"
#include "store/string_id_map.h"

namespace {

struct Names {
  Names() {
    const char* ops[] = {"fusion", "collective-permute", "copy-start", "copy-done", "add", "slice",
                         "dot", "all-gather", "custom-call", "convolution", "reduce-scatter", "multiply"};
    std::mt19937_64 rng(1);
    std::vector<std::string> distinct;
    for (int i = 0; i < 100000; ++i) distinct.push_back(std::string(ops[rng() % 12]) + "." + std::to_string(i));
    // Stored texts lie apart from the map, between other allocations, as
    // in the shared string table's blocks.
    for (const std::string& n : distinct) {
      stored.push_back(n);
      padding.push_back(std::string(64, 'x'));
      views.push_back(stored.back());
    }
    for (int i = 0; i < (1 << 20); ++i) queries.push_back(distinct[rng() % distinct.size()]);
  }
  std::deque<std::string> stored, padding;
  std::vector<std::string_view> views;
  std::vector<std::string> queries;
};

const Names& TheNames() {
  static const Names* names = new Names;
  return *names;
}

template <typename Map, typename Find, typename Prefetch>
void Lookups(benchmark::State& state, const Map& map, Find find, Prefetch prefetch) {
  const std::vector<std::string>& q = TheNames().queries;
  std::vector<char> other(256 << 10);
  uint64_t sum = 0;
  size_t i = 0;
  for (auto _ : state) {
    prefetch(map, q[(i + 4) % q.size()]);
    sum += find(map, q[i % q.size()]);
    std::memset(other.data() + (i * 4096) % other.size(), static_cast<int>(i), 1024);
    ++i;
  }
  benchmark::DoNotOptimize(sum);
}

void BM_ViewKeys(benchmark::State& state) {
  absl::flat_hash_map<std::string_view, uint32_t, tracetable::TextHash> map;
  for (size_t i = 0; i < TheNames().views.size(); ++i) map.emplace(TheNames().views[i], i);
  Lookups(
      state, map, [](const auto& m, std::string_view s) { return m.find(s)->second; },
      [](const auto& m, std::string_view s) { m.prefetch(s); });
}
BENCHMARK(BM_ViewKeys);

void BM_StringIdMap(benchmark::State& state) {
  tracetable::StringIdMap map;
  for (size_t i = 0; i < TheNames().views.size(); ++i) map.Insert(TheNames().views[i], i);
  Lookups(
      state, map, [](const auto& m, std::string_view s) { return *m.Find(s); },
      [](const auto& m, std::string_view s) { m.Prefetch(s); });
}
BENCHMARK(BM_StringIdMap);

}  // namespace
