// Thread time (Chrome JSON tts/tdur) through a real table: stored for X,
// instants and B/E pairs (tdur from the pair's tts), shown in answers,
// written by export so that export -> ingest gives it back, and costing
// nothing to events without it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "format/keys.h"
#include "format/thread_time_codec.h"
#include "format/tile_codec.h"
#include "format/time.h"
#include "gtest/gtest.h"
#include "tests/query/ingested_table_test.h"
#include "ingest/input.h"
#include "leveldb/iterator.h"
#include "query/export.h"
#include "query/trace_json.h"
#include "query/window.h"
#include "store/table.h"
#include "store/table_builder.h"

namespace tracetable {
namespace {
namespace fs = std::filesystem;

using namespace tracetable::testing;

class ThreadTimeTest : public IngestedTableTest {};

// name -> (tts, tdur) as text ("-" when absent), from the table itself.
std::map<std::string, std::pair<std::string, std::string>> ThreadTimes(const Table& t) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const WindowItem& i : Everything(t)) {
    if (i.summary || t.resources().tracks(i.track).kind() == proto::Track::COUNTER) continue;
    absl::StatusOr<ThreadTimeEntry> tt = t.ThreadTime(i.row.id);
    EXPECT_EQ(tt.ok(), (i.row.flags & kFlagHasThreadTime) != 0) << t.String(i.row.name);
    std::pair<std::string, std::string> v{"-", "-"};
    if (tt.ok() && tt->tts) v.first = FormatMicros(*tt->tts);
    if (tt.ok() && tt->tdur) v.second = FormatMicros(*tt->tdur);
    EXPECT_TRUE(out.emplace(std::string(t.String(i.row.name)), v).second) << "names are unique here";
  }
  return out;
}

auto Fields(const TileRow& r) {
  return std::tuple(r.kind, r.lane, r.ts, r.dur, r.name, r.cat, r.flags, r.flow_id, r.flow_out, r.flow_in,
                    r.id, r.value, r.count, r.covered, r.longest_dur);
}

constexpr char kTrace[] = R"({"traceEvents":[
{"ph":"X","name":"x","pid":1,"tid":1,"ts":10,"dur":5,"tts":1000.000001,"tdur":4.5,"args":{"k":1}},
{"ph":"X","name":"x_tdur_only","pid":1,"tid":1,"ts":16,"dur":1,"tdur":"0.75"},
{"ph":"X","name":"plain","pid":1,"tid":1,"ts":18,"dur":1,"args":{"k":2}},
{"ph":"B","name":"outer","pid":1,"tid":2,"ts":20,"tts":2000},
{"ph":"B","name":"inner","pid":1,"tid":2,"ts":21,"tts":2001,"args":{"b":1}},
{"ph":"E","pid":1,"tid":2,"ts":22,"tts":2001.25,"args":{"e":1}},
{"ph":"E","pid":1,"tid":2,"ts":30,"tts":2007},
{"ph":"B","name":"begin_only_tts","pid":1,"tid":3,"ts":20,"tts":50},
{"ph":"E","pid":1,"tid":3,"ts":25},
{"ph":"B","name":"end_only_tts","pid":1,"tid":3,"ts":26},
{"ph":"E","pid":1,"tid":3,"ts":27,"tts":9},
{"ph":"B","name":"unmatched","pid":1,"tid":4,"ts":28,"tts":70},
{"ph":"i","name":"instant","pid":1,"tid":1,"ts":19,"s":"t","tts":1009},
{"ph":"X","name":"negative","pid":1,"tid":1,"ts":40,"dur":1,"tts":-3,"tdur":-1}
]})";

TEST_F(ThreadTimeTest, StoredForXInstantsAndBeginEndPairs) {
  std::unique_ptr<Table> t = IngestText(kTrace, "a.tracetable");
  ASSERT_TRUE(t);
  using P = std::pair<std::string, std::string>;
  const std::map<std::string, P> want = {
      {"x", {"1000.000001", "4.5"}},  {"x_tdur_only", {"-", "0.75"}}, {"plain", {"-", "-"}},
      {"outer", {"2000", "7"}},       {"inner", {"2001", "0.25"}},    {"begin_only_tts", {"50", "-"}},
      {"end_only_tts", {"-", "-"}},   {"unmatched", {"70", "-"}},     {"instant", {"1009", "-"}},
      {"negative", {"-3", "-1"}}};
  EXPECT_EQ(ThreadTimes(*t), want);
  EXPECT_EQ(t->meta().skipped_counts().at("E with tts after a B without (thread time not stored)"), 1u);
  // The B's and E's arguments are still merged.
  for (const WindowItem& i : Everything(*t)) {
    if (t->String(i.row.name) == "inner") {
      EXPECT_EQ(*t->Args(i.row.id), R"({"b":1,"e":1})");
    }
  }
}

// The answer shows it (in the thread's clock, unshifted), and export writes
// it so that a re-ingest has the same thread times, on the same events.
TEST_F(ThreadTimeTest, AnswersAndExportRoundTrip) {
  std::unique_ptr<Table> t = IngestText(kTrace, "a.tracetable");
  ASSERT_TRUE(t);
  WindowRequest req;
  req.start = t->meta().min_ts();
  req.end = t->meta().max_end();
  absl::StatusOr<WindowResult> r = QueryWindow(*t, req);
  ASSERT_TRUE(r.ok());
  std::string json;
  ASSERT_TRUE(AppendWindowJson(*t, req, *r, TraceJsonOptions(), &json).ok());
  EXPECT_NE(json.find(R"("name":"x","cat":"","dur":5,"tts":1000.000001,"tdur":4.5,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("name":"outer","cat":"","dur":10,"tts":2000,"tdur":7,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("name":"instant","cat":"","s":"t","tts":1009,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("name":"plain","cat":"","dur":1,"tt_args")"), std::string::npos) << json;

  ASSERT_TRUE(ExportChromeTrace(*t, t->meta().min_ts(), t->meta().max_end(), Path("e.json")).ok());
  std::unique_ptr<Table> back = Ingest(Path("e.json"), "b.tracetable");
  ASSERT_TRUE(back);
  EXPECT_EQ(ThreadTimes(*back), ThreadTimes(*t));
}

// Events without thread time are stored exactly as before: the same trace
// with and without tts/tdur gives the same records but for the thread time
// records and flag 128 on the rows of the events that have it; a trace
// without any has no thread time record.
TEST_F(ThreadTimeTest, EventsWithoutThreadTimeCostNothing) {
  std::string stripped = kTrace;
  for (const char* key : {"\"tts\":", "\"tdur\":"}) {
    for (size_t at; (at = stripped.find(key)) != std::string::npos;) {
      const size_t end = stripped.find_first_of(",}", at);
      stripped.erase(at - 1, end - at + 1);  // with the comma before
    }
  }
  ASSERT_EQ(stripped.find("\"tts\""), std::string::npos) << stripped;
  std::unique_ptr<Table> with = IngestText(kTrace, "with.tracetable");
  std::unique_ptr<Table> without = IngestText(stripped, "without.tracetable");
  ASSERT_TRUE(with && without);
  std::unique_ptr<leveldb::Iterator> a = with->NewIterator(), b = without->NewIterator();
  a->SeekToFirst();
  b->SeekToFirst();
  int thread_time_records = 0, flagged_rows = 0, tiles = 0;
  while (a->Valid()) {
    const std::string key = a->key().ToString();
    if (key[0] == kThreadTimePrefix) {
      ++thread_time_records;
      a->Next();
      continue;
    }
    ASSERT_TRUE(b->Valid());
    ASSERT_EQ(key, b->key().ToString());
    if (key[0] == kTilePrefix) {
      ++tiles;
      TileKey tk;
      ASSERT_TRUE(DecodeTileKey(key, &tk));
      std::vector<TileRow> ra, rb;
      ASSERT_TRUE(DecodeTile(a->value().ToString(), with->TileStart(tk), &ra).ok());
      ASSERT_TRUE(DecodeTile(b->value().ToString(), without->TileStart(tk), &rb).ok());
      bool flagged = false;
      for (TileRow& r : ra) {
        flagged |= (r.flags & kFlagHasThreadTime) != 0;
        flagged_rows += (r.flags & kFlagHasThreadTime) != 0;
        r.flags &= ~kFlagHasThreadTime;
      }
      ASSERT_EQ(ra.size(), rb.size());
      for (size_t k = 0; k < ra.size(); ++k) EXPECT_EQ(Fields(ra[k]), Fields(rb[k])) << k;
      if (!flagged) {
        EXPECT_EQ(a->value().ToString(), b->value().ToString()) << "tile bytes";
      }
    } else if (key != kMetaKey) {
      EXPECT_EQ(a->value().ToString(), b->value().ToString()) << "key " << key[0];
    }
    a->Next();
    b->Next();
  }
  EXPECT_FALSE(b->Valid());
  EXPECT_EQ(thread_time_records, 1);
  EXPECT_EQ(flagged_rows, 8);
  EXPECT_GT(tiles, 0);
  std::unique_ptr<leveldb::Iterator> c = without->NewIterator();
  for (c->SeekToFirst(); c->Valid(); c->Next()) EXPECT_NE(c->key()[0], kThreadTimePrefix);
}

TEST(ThreadTimeCodec, RoundTripsAndRejectsDamage) {
  std::vector<ThreadTimeEntry> entries = {{0, 5'000'000, std::nullopt},
                                          {3, std::nullopt, 2'000'000},
                                          {255, -7'000'000, 1'000'000'000'000}};
  const std::string bytes = EncodeThreadTimeBlock(entries);
  std::vector<ThreadTimeEntry> back;
  ASSERT_TRUE(DecodeThreadTimeBlock(bytes, &back).ok());
  EXPECT_EQ(back, entries);
  for (const ThreadTimeEntry& e : entries) EXPECT_EQ(*FindThreadTime(bytes, e.slot), e);
  EXPECT_TRUE(absl::IsNotFound(FindThreadTime(bytes, 4).status()));
  // Sub-unit values keep every picosecond.
  entries = {{1, 1, INT64_MIN}, {2, INT64_MAX, 999}};
  ASSERT_TRUE(DecodeThreadTimeBlock(EncodeThreadTimeBlock(entries), &back).ok());
  EXPECT_EQ(back, entries);
  // A count that does not match the bitmap, a value that overflows its unit.
  proto::ThreadTimeBlock b;
  b.ParseFromString(bytes);
  b.add_tts(1);
  EXPECT_FALSE(DecodeThreadTimeBlock(b.SerializeAsString(), &back).ok());
  b.ParseFromString(bytes);
  b.set_unit(uint64_t{1} << 62);
  EXPECT_FALSE(DecodeThreadTimeBlock(b.SerializeAsString(), &back).ok());
  EXPECT_FALSE(FindThreadTime("\xff\xff", 0).ok());
}

}  // namespace
}  // namespace tracetable
