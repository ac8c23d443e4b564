// Flow ends through the flow index (query/flow_ends.h) on random traces with
// chains A→B→C of flow events (s/t/f) and of bind ids (flow v2): every flow
// id's ends equal a brute-force scan of the whole table, and each chain's
// ends are the slices the generator bound it to.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "format/tile_codec.h"
#include "format/keys.h"
#include "gtest/gtest.h"
#include "ingest/input.h"
#include "query/flow_ends.h"
#include "query/serve/flow_api.h"
#include "query/window.h"
#include "store/table.h"
#include "store/table_builder.h"
#include "tests/flow_id_downgrade.h"
#include "tests/run_cli.h"
#include "tests/table_edit.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

// (track, slice id, at, in, out, via_event): one end as both sides see it.
using End = std::tuple<uint32_t, uint64_t, int64_t, bool, bool, bool>;

End Key(const FlowEnd& e) { return {e.track, e.slice.id, e.at, e.in, e.out, e.via_event}; }

struct Chain {
  std::string id;     // its text
  std::string json;   // as the trace writes it
  std::string json_first;  // at the chain's first end, if written otherwise
  bool number = false;  // a numeric flow id (format/flow_id.h)
  bool v2 = false;
  std::vector<std::string> slices;  // names of A, B, C
};

// A random trace on `threads` threads: top-level slices "p.." each with one
// child "c.." (flows attach to children), noise slices and instants of
// random length so that tiles are many and at several levels, and `chains`
// flows of three ends each, half with flow events, half with bind ids.
std::string RandomTrace(uint32_t seed, int threads, int per_thread, int chains, std::vector<Chain>* out) {
  std::mt19937 rng(seed);
  std::string json = "{\"traceEvents\":[\n";
  bool first = true;
  auto add = [&](const std::string& e) {
    if (!first) json += ",\n";
    first = false;
    json += e;
  };
  // Children by thread and index: (ts, dur, name) in µs.
  std::vector<std::vector<std::tuple<int64_t, int64_t, std::string>>> children(threads);
  for (int t = 0; t < threads; ++t) {
    int64_t ts = 1000 + t * 7;
    for (int k = 0; k < per_thread; ++k) {
      const int64_t dur = 40 + static_cast<int64_t>(rng() % 2000);
      const std::string name = absl::StrCat("p", t, "_", k);
      add(absl::StrCat("{\"ph\":\"X\",\"pid\":1,\"tid\":", t + 1, ",\"ts\":", ts, ",\"dur\":", dur, ",\"name\":\"", name,
                       "\"}"));
      const int64_t cts = ts + dur / 4, cdur = dur / 2;
      const std::string child = absl::StrCat("c", t, "_", k);
      add(absl::StrCat("{\"ph\":\"X\",\"pid\":1,\"tid\":", t + 1, ",\"ts\":", cts, ",\"dur\":", cdur, ",\"name\":\"",
                       child, "\"}"));
      children[t].push_back({cts, cdur, child});
      // Noise: short instants and a tiny slice between top-level slices.
      for (int n = 0; n < 3; ++n) {
        add(absl::StrCat("{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":", t + 1, ",\"ts\":", ts + dur + 1 + n,
                         ",\"name\":\"noise\"}"));
      }
      ts += dur + 10 + static_cast<int64_t>(rng() % 50);
    }
  }
  for (int c = 0; c < chains; ++c) {
    Chain ch;
    // Every form of id: decimal numbers (as numbers and as strings) are
    // numeric flow ids; hex, leading zeros, negatives and numbers of 2^31 or
    // more are strings.
    const int v = c * 7 + 1;
    switch (c % 6) {
      case 0: ch.id = absl::StrCat(v); ch.json = ch.id; ch.number = true; break;
      case 1:  // one flow, whether written as a number or a string
        ch.id = absl::StrCat(v);
        ch.json = absl::StrCat("\"", v, "\"");
        ch.json_first = ch.id;
        ch.number = true;
        break;
      case 2: ch.id = absl::StrCat("0x", v); break;
      case 3: ch.id = absl::StrCat("00", v); break;
      case 4: ch.id = absl::StrCat(-v); ch.json = ch.id; break;
      case 5: ch.id = absl::StrCat(2147483648ull + static_cast<uint64_t>(v)); ch.json = ch.id; break;
    }
    if (ch.json.empty()) ch.json = absl::StrCat("\"", ch.id, "\"");
    ch.v2 = c % 2 == 1;
    // Three children in time order on random threads: each starts after the
    // previous one ends.
    auto after = [&](int t, int64_t time) -> const std::tuple<int64_t, int64_t, std::string>& {
      for (const auto& c : children[t]) {
        if (std::get<0>(c) > time) return c;
      }
      return children[t].back();
    };
    const int k = static_cast<int>(rng() % (per_thread / 2));
    const int ta = static_cast<int>(rng() % threads), tb = static_cast<int>(rng() % threads),
              tc = static_cast<int>(rng() % threads);
    const auto& a = children[ta][k];
    const auto& b = after(tb, std::get<0>(a) + std::get<1>(a) + static_cast<int64_t>(rng() % 3000));
    const auto& cc = after(tc, std::get<0>(b) + std::get<1>(b) + static_cast<int64_t>(rng() % 3000));
    ch.slices = {std::get<2>(a), std::get<2>(b), std::get<2>(cc)};
    if (!ch.v2) {
      const char* phases[] = {"s", "t", "f"};
      const std::tuple<int64_t, int64_t, std::string>* ends[] = {&a, &b, &cc};
      const int tids[] = {ta, tb, tc};
      for (int e = 0; e < 3; ++e) {
        const int64_t at = std::get<0>(*ends[e]) + std::get<1>(*ends[e]) / 2;
        add(absl::StrCat("{\"ph\":\"", phases[e], "\",\"bp\":\"e\",\"pid\":1,\"tid\":", tids[e] + 1, ",\"ts\":", at,
                         ",\"id\":", e == 0 && !ch.json_first.empty() ? ch.json_first : ch.json, ",\"name\":\"flow\",\"cat\":\"ac2g\"}"));
      }
    } else {
      // Flow v2: the bound slices themselves, beside the tree (another tid).
      const std::tuple<int64_t, int64_t, std::string>* ends[] = {&a, &b, &cc};
      const char* flags[] = {"\"flow_out\":true", "\"flow_in\":true,\"flow_out\":true", "\"flow_in\":true"};
      for (int e = 0; e < 3; ++e) {
        const std::string name = absl::StrCat("bound_", c, "_", e);
        ch.slices[e] = name;
        add(absl::StrCat("{\"ph\":\"X\",\"pid\":2,\"tid\":", 100 + c % 3, ",\"ts\":", std::get<0>(*ends[e]),
                         ",\"dur\":", std::get<1>(*ends[e]) / 3 + 1, ",\"name\":\"", name, "\",\"bind_id\":", e == 0 && !ch.json_first.empty() ? ch.json_first : ch.json,
                         ",", flags[e], "}"));
      }
    }
    out->push_back(ch);
  }
  json += "\n]}\n";
  return json;
}

// The ends of every flow id, by brute force over all events of the table.
std::map<uint32_t, std::set<End>> BruteForce(const Table& t) {
  WindowRequest req;
  req.start = t.meta().min_ts();
  req.end = t.meta().max_end();
  absl::StatusOr<WindowResult> w = QueryWindow(t, req);
  EXPECT_TRUE(w.ok()) << w.status();
  std::map<uint32_t, std::set<End>> out;
  for (const WindowItem& i : w->items) {
    const TileRow& r = i.row;
    const bool point = r.kind == EventKind::kFlowStart || r.kind == EventKind::kFlowStep || r.kind == EventKind::kFlowEnd;
    if (point) {
      const TileRow* best = nullptr;
      for (const WindowItem& s : w->items) {
        if (s.track != i.track || s.row.kind != EventKind::kSlice || s.row.ts > r.ts || s.row.ts + s.row.dur < r.ts) continue;
        if (!best || s.row.lane > best->lane) best = &s.row;
      }
      out[r.flow_id].insert({i.track, best ? best->id : r.id, r.ts, r.kind != EventKind::kFlowStart,
                             r.kind != EventKind::kFlowEnd, true});
      continue;
    }
    if (r.flow_in) out[r.flow_in].insert({i.track, r.id, r.ts, true, false, false});
    if (r.flow_out) out[r.flow_out].insert({i.track, r.id, r.ts + r.dur, false, true, false});
  }
  return out;
}

class FlowEndsTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / absl::StrCat("tt_flow_ends_", getpid(), "_", GetParam());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Table> Ingest(const std::string& json) {
    const std::string in = (dir_ / "trace.json").string(), out = (dir_ / "t.tracetable").string();
    std::ofstream(in) << json;
    absl::StatusOr<std::vector<InputFile>> files = ExpandInputs({in});
    EXPECT_TRUE(files.ok()) << files.status();
    BuildOptions opts;
    opts.output = out;
    absl::StatusOr<std::unique_ptr<TableBuilder>> b = TableBuilder::Create(opts);
    EXPECT_TRUE(b.ok()) << b.status();
    EXPECT_TRUE(ReadInputs(*files, b->get(), {}).ok());
    EXPECT_TRUE((*b)->Finish().ok());
    absl::StatusOr<std::unique_ptr<Table>> t = Table::Open(out);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? std::move(*t) : nullptr;
  }

  fs::path dir_;
};

TEST_P(FlowEndsTest, EqualsBruteForceAndTheGeneratedChains) {
  std::vector<Chain> chains;
  std::unique_ptr<Table> t = Ingest(RandomTrace(GetParam(), 4, 1500, 200, &chains));
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->meta().has_flow_index());
  EXPECT_EQ(t->meta().flow_index().flows(), 200u);
  const std::map<uint32_t, std::set<End>> expected = BruteForce(*t);
  ASSERT_EQ(expected.size(), 200u);
  uint64_t tiles = 0;
  for (const auto& [flow, ends] : expected) {
    ReadStats stats;
    absl::StatusOr<std::vector<FlowEnd>> got = FindFlowEnds(*t, flow, &stats);
    ASSERT_TRUE(got.ok()) << got.status();
    std::set<End> keys;
    for (const FlowEnd& e : *got) keys.insert(Key(e));
    EXPECT_EQ(keys, ends) << "flow " << t->FlowIdText(flow);
    EXPECT_EQ(keys.size(), got->size());
    EXPECT_TRUE(std::is_sorted(got->begin(), got->end(), [](const FlowEnd& a, const FlowEnd& b) { return a.at < b.at; }));
    tiles = std::max(tiles, stats.tiles);
  }
  // A lookup reads a few tiles, not the table (which has thousands).
  EXPECT_LT(tiles, 60u);
  for (const Chain& ch : chains) {
    std::optional<uint32_t> sid = FindFlowId(*t, ch.id);
    ASSERT_TRUE(sid) << ch.id;
    EXPECT_EQ(IsNumericFlowId(*sid), ch.number) << ch.id;
    EXPECT_EQ(t->FlowIdText(*sid), ch.id);
    // Numbers are kept in no string table; the other ids are strings.
    bool in_strings = false;
    for (size_t i = 1; i < t->num_strings(); ++i) in_strings |= t->String(static_cast<uint32_t>(i)) == ch.id;
    EXPECT_EQ(in_strings, !ch.number) << ch.id;
    ReadStats stats;
    absl::StatusOr<std::vector<FlowEnd>> got = FindFlowEnds(*t, *sid, &stats);
    ASSERT_TRUE(got.ok());
    std::vector<std::string> names;
    for (const FlowEnd& e : *got) names.push_back(std::string(t->String(e.slice.name)));
    const std::vector<std::string> want =
        ch.v2 ? std::vector<std::string>{ch.slices[0], ch.slices[1], ch.slices[1], ch.slices[2]} : ch.slices;
    EXPECT_EQ(names, want) << ch.id;
    if (!ch.v2 && got->size() == 3) {
      EXPECT_TRUE((*got)[0].out && !(*got)[0].in);
      EXPECT_TRUE((*got)[1].out && (*got)[1].in);
      EXPECT_TRUE(!(*got)[2].out && (*got)[2].in);
    }
  }
  ReadStats stats;
  absl::StatusOr<std::vector<FlowEnd>> none = FindFlowEnds(*t, *FindFlowId(*t, "noise"), &stats);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// A table written before numeric flow ids (version 6: every id a string)
// answers every chain by its text with the same ends, through its string
// table; and its tiles name no numbers.
TEST_P(FlowEndsTest, VersionSixTablesHoldEveryIdAsAString) {
  std::vector<Chain> chains;
  std::unique_ptr<Table> t = Ingest(RandomTrace(GetParam(), 3, 300, 60, &chains));
  ASSERT_TRUE(t);
  std::map<std::string, std::set<End>> want;
  for (const Chain& ch : chains) {
    ReadStats stats;
    absl::StatusOr<std::vector<FlowEnd>> got = FindFlowEnds(*t, *FindFlowId(*t, ch.id), &stats);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_FALSE(got->empty()) << ch.id;
    for (const FlowEnd& e : *got) want[ch.id].insert(Key(e));
  }
  const std::string path = t->path();
  t.reset();
  DowngradeFlowIds(path);
  absl::StatusOr<std::unique_ptr<Table>> old = Table::Open(path);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ((*old)->meta().format_version(), 6u);
  for (const Chain& ch : chains) {
    std::optional<uint32_t> sid = FindFlowId(**old, ch.id);
    ASSERT_TRUE(sid) << ch.id;
    EXPECT_FALSE(IsNumericFlowId(*sid)) << ch.id;
    EXPECT_EQ((*old)->String(*sid), ch.id);
    ReadStats stats;
    absl::StatusOr<std::vector<FlowEnd>> got = FindFlowEnds(**old, *sid, &stats);
    ASSERT_TRUE(got.ok()) << got.status();
    std::set<End> keys;
    for (const FlowEnd& e : *got) keys.insert(Key(e));
    EXPECT_EQ(keys, want[ch.id]) << ch.id;
    const serve::Params by_id{{"id", ch.id}};
    serve::Reply r = serve::FlowReply(**old, by_id);
    EXPECT_EQ(r.status, 200);
  }
  for (const auto& [flow, ends] : BruteForce(**old)) EXPECT_FALSE(IsNumericFlowId(flow)) << flow;
}

// `tracetable verify` takes a flow id beyond the string table, or a number
// in a table older than numbers, for damage.
TEST_P(FlowEndsTest, VerifyChecksFlowIds) {
  std::vector<Chain> chains;
  std::unique_ptr<Table> t = Ingest(RandomTrace(GetParam(), 2, 100, 12, &chains));
  ASSERT_TRUE(t);
  const std::string path = t->path();
  const uint32_t strings = static_cast<uint32_t>(t->num_strings());
  const int64_t min_ts = t->meta().min_ts();
  t.reset();
  auto verify = [](const std::string& table) { return RunCli(cli::VerifyMain, {"verify", table}); };
  // Sets the first flow event's id in the table to `id`.
  auto set_first_flow = [&](const std::string& table, uint32_t id) {
    EditTable(table, [&](std::map<std::string, std::string>* records) {
      for (auto& [key, value] : *records) {
        TileKey tk;
        if (key[0] != kTilePrefix || !DecodeTileKey(key, &tk) || tk.section != TileSection::kEvents) continue;
        const int64_t start = min_ts + static_cast<int64_t>(tk.start);
        std::vector<TileRow> rows;
        ASSERT_TRUE(DecodeTile(value, start, &rows).ok());
        for (TileRow& r : rows) {
          if (r.kind != EventKind::kFlowStart) continue;
          r.flow_id = id;
          value = EncodeTile(rows, start, false);
          return;
        }
      }
      FAIL() << "no flow event";
    });
  };
  const fs::path copy = dir_ / "copy.tracetable";
  fs::copy(path, copy, fs::copy_options::recursive);
  EXPECT_EQ(verify(path), 0);
  set_first_flow(path, strings + 3);
  EXPECT_NE(verify(path), 0);
  DowngradeFlowIds(copy.string());
  EXPECT_EQ(verify(copy.string()), 0);
  set_first_flow(copy.string(), *NumericFlowId("12"));
  EXPECT_NE(verify(copy.string()), 0);
}

INSTANTIATE_TEST_SUITE_P(Seeds, FlowEndsTest, ::testing::Values(1u, 2u, 3u));

// A table written before the index existed cannot answer (rather than
// answering "no ends": 409 from GET /flow); a damaged index is a corrupt
// table (500), not an answer.
TEST_P(FlowEndsTest, NoIndexAndDamagedIndex) {
  std::vector<Chain> chains;
  std::unique_ptr<Table> t = Ingest(RandomTrace(GetParam(), 2, 100, 10, &chains));
  ASSERT_TRUE(t);
  const uint32_t flow = *FindFlowId(*t, chains[0].id);
  const std::string path = t->path();
  t.reset();
  EditTable(path, [&](std::map<std::string, std::string>* records) {
    for (auto& [key, value] : *records) {
      if (key[0] != kFlowPrefix) continue;
      proto::FlowTiles block;
      ASSERT_TRUE(block.ParseFromString(value));
      block.set_track(0, 1u << 30);
      value = block.SerializeAsString();
    }
  });
  absl::StatusOr<std::unique_ptr<Table>> damaged = Table::Open(path);
  ASSERT_TRUE(damaged.ok()) << damaged.status();
  ReadStats stats;
  absl::StatusOr<std::vector<FlowEnd>> r = FindFlowEnds(**damaged, flow, &stats);
  EXPECT_TRUE(absl::IsDataLoss(r.status())) << r.status();
  const serve::Params by_sid{{"sid", std::to_string(flow)}};
  EXPECT_EQ(serve::FlowReply(**damaged, by_sid).status, 500);
  damaged->reset();
  EditTable(path, [&](std::map<std::string, std::string>* records) {
    for (auto it = records->begin(); it != records->end();) it = it->first[0] == kFlowPrefix ? records->erase(it) : std::next(it);
    proto::TableMeta meta;
    ASSERT_TRUE(meta.ParseFromString((*records)[kMetaKey]));
    meta.clear_flow_index();
    (*records)[kMetaKey] = meta.SerializeAsString();
  });
  absl::StatusOr<std::unique_ptr<Table>> old = Table::Open(path);
  ASSERT_TRUE(old.ok()) << old.status();
  r = FindFlowEnds(**old, flow, &stats);
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  serve::Reply reply = serve::FlowReply(**old, by_sid);
  EXPECT_EQ(reply.status, 409) << reply.body;
}

}  // namespace
}  // namespace tracetable
