// Phase mapping, times, ids and top-level layout of the Chrome JSON reader.
#include <string>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/chrome_json/reader.h"
#include "tests/chrome_json/collecting_sink.h"
#include "tests/chrome_json/test_util.h"

namespace tracetable::testing_sink {
namespace {

using ::testing::HasSubstr;

TEST(ChromeJsonPhases, CompleteEventKeepsExactTimesNamesAndArgs) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"X","name":"run","cat":"sched","pid":1,"tid":2,
     "ts":1680000000000.123456,"dur":1.5,"tdur":1,"tts":7,"args":{"k":[1,"x"]}},
    {"ph":"X","name":"run","cat":"sched","pid":1,"tid":2,
     "ts":1680000000001.000001,"dur":0.000001}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 2u);
  const Collected& a = sink.events[0];
  EXPECT_EQ(a.event.kind, EventKind::kSlice);
  EXPECT_EQ(a.name, "run");
  EXPECT_EQ(a.cat, "sched");
  EXPECT_EQ(a.track, "thread n:1 n:2");
  EXPECT_EQ(a.args, R"({"k":[1,"x"]})");
  // 1680000000000.123456 us = 1680000000000123456 ps exactly; no double could
  // hold that.
  EXPECT_TRUE(sink.AbsPs(a.event.ts) ==
              static_cast<__int128>(1680000000000123456LL) * 1);
  EXPECT_EQ(*sink.origin_ns, 1680000000000123LL);
  EXPECT_EQ(a.event.dur, 1500000);
  const Collected& b = sink.events[1];
  EXPECT_EQ(b.event.ts - a.event.ts, 876545);  // 0.876545 us
  EXPECT_EQ(b.event.dur, 1);
  EXPECT_EQ(b.args, "");
}

TEST(ChromeJsonPhases, SubPicosecondDigitsAreTruncated) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([{"ph":"i","ts":5.0000019,"pid":1,"tid":1},
                           {"ph":"i","ts":1.5e1,"pid":1,"tid":1}])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_TRUE(sink.AbsPs(sink.events[0].event.ts) == 5000001);
  EXPECT_TRUE(sink.AbsPs(sink.events[1].event.ts) == 15000000);
}

TEST(ChromeJsonPhases, BeginEndAndEndWithoutName) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"B","name":"outer","cat":"c","pid":3,"tid":4,"ts":10,"args":{"a":1}},
    {"ph":"B","name":"inner","pid":3,"tid":4,"ts":11},
    {"ph":"E","pid":3,"tid":4,"ts":12},
    {"ph":"E","name":"outer","pid":3,"tid":4,"ts":13,"args":{"r":2}}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 4u);
  EXPECT_EQ(sink.events[0].event.kind, EventKind::kBegin);
  EXPECT_EQ(sink.events[0].args, R"({"a":1})");
  EXPECT_EQ(sink.events[1].event.kind, EventKind::kBegin);
  EXPECT_EQ(sink.events[2].event.kind, EventKind::kEnd);
  EXPECT_EQ(sink.events[2].event.name, 0u);  // E may lack a name
  EXPECT_EQ(sink.events[3].event.kind, EventKind::kEnd);
  EXPECT_EQ(sink.events[3].name, "outer");
  EXPECT_EQ(sink.events[3].args, R"({"r":2})");
  for (const auto& e : sink.events) EXPECT_EQ(e.track, "thread n:3 n:4");
  EXPECT_EQ(sink.events[3].event.ts - sink.events[0].event.ts, 3000000);
}

TEST(ChromeJsonPhases, InstantsCarryTheirScope) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"i","name":"g","s":"g","pid":1,"tid":1,"ts":1},
    {"ph":"i","name":"p","s":"p","pid":1,"tid":1,"ts":2},
    {"ph":"i","name":"t","s":"t","pid":1,"tid":1,"ts":3},
    {"ph":"I","name":"legacy","pid":1,"tid":1,"ts":4},
    {"ph":"R","name":"mark","pid":1,"tid":1,"ts":5},
    {"ph":"i","name":"noscope","pid":1,"tid":1,"ts":6}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 6u);
  for (const auto& e : sink.events) EXPECT_EQ(e.event.kind, EventKind::kInstant);
  EXPECT_EQ(sink.events[0].event.flags, kFlagScopeGlobal);
  EXPECT_EQ(sink.events[1].event.flags, kFlagScopeProcess);
  EXPECT_EQ(sink.events[2].event.flags, 0u);
  EXPECT_EQ(sink.events[3].event.flags, 0u);
  EXPECT_EQ(sink.events[4].name, "mark");
  EXPECT_EQ(sink.events[5].event.flags, 0u);
  // Scoped instants sit on their process's or the input's instant track, as
  // Perfetto shows them; the others stay on their thread.
  EXPECT_EQ(sink.events[0].track, "instants global");
  EXPECT_EQ(sink.events[1].track, "instants n:1");
  for (int i = 2; i < 6; ++i) EXPECT_EQ(sink.events[i].track, "thread n:1 n:1") << i;
}

TEST(ChromeJsonPhases, GlobalInstantsNeedNoThread) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"i","name":"a","s":"g","pid":7,"tid":8,"ts":1},
    {"ph":"i","name":"b","s":"g","ts":2},
    {"ph":"I","name":"c","s":"p","pid":"browser","tid":3,"ts":3}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 3u);
  EXPECT_EQ(sink.events[0].track, "instants global");
  EXPECT_EQ(sink.events[1].track, "instants global");
  EXPECT_EQ(sink.events[2].track, "instants s:browser");
  // No thread track was made for them.
  for (const std::string& t : sink.tracks) EXPECT_FALSE(t.starts_with("thread")) << t;
}

TEST(ChromeJsonPhases, CounterGivesOneSamplePerNumericArg) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"C","name":"mem","cat":"m","pid":9,"tid":1,"ts":1,
     "args":{"heap":10.5,"stack":-2,"note":"text","big":1e300}},
    {"ph":"C","name":"mem","id":"7","pid":9,"ts":2,"args":{"heap":3}},
    {"ph":"C","name":"empty","pid":9,"ts":3,"args":{}},
    {"ph":"C","name":"none","pid":9,"ts":4}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 4u);
  EXPECT_EQ(sink.events[0].event.kind, EventKind::kCounter);
  EXPECT_EQ(sink.events[0].track, "counter n:9 mem / heap");
  EXPECT_EQ(sink.events[0].name, "heap");
  EXPECT_EQ(sink.events[0].cat, "m");
  EXPECT_DOUBLE_EQ(sink.events[0].event.value, 10.5);
  EXPECT_EQ(sink.events[1].track, "counter n:9 mem / stack");
  EXPECT_DOUBLE_EQ(sink.events[1].event.value, -2);
  EXPECT_EQ(sink.events[2].track, "counter n:9 mem / big");
  EXPECT_DOUBLE_EQ(sink.events[2].event.value, 1e300);
  EXPECT_EQ(sink.events[3].track, "counter n:9 mem [7] / heap");
  EXPECT_EQ(sink.skipped["counter arg that is not a number"], 1u);
  EXPECT_EQ(sink.skipped["counter event without numeric args"], 1u);
  EXPECT_EQ(sink.skipped["counter event without args"], 1u);
}

TEST(ChromeJsonPhases, MetadataGoesToSinkSetters) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"M","name":"process_name","pid":1,"args":{"name":"Browser"}},
    {"ph":"M","name":"thread_name","pid":1,"tid":"io","args":{"name":"IO\u00e9"}},
    {"ph":"M","name":"process_sort_index","pid":1,"args":{"sort_index":-5}},
    {"ph":"M","name":"thread_sort_index","pid":1,"tid":2,"args":{"sort_index":3}},
    {"ph":"M","name":"process_labels","pid":1,"args":{"labels":"a,b"}},
    {"ph":"M","name":"process_uptime_seconds","pid":1,"args":{"uptime":3}},
    {"ph":"M","name":"process_name","pid":2,"args":{}}
  ])", &sink).ok());
  EXPECT_TRUE(sink.events.empty());
  EXPECT_FALSE(sink.origin_ns.has_value());  // M events have no time
  EXPECT_EQ(sink.process_names["n:1"], "Browser");
  EXPECT_EQ(sink.thread_names["n:1 s:io"], "IO\xc3\xa9");
  EXPECT_EQ(sink.process_sort["n:1"], -5);
  EXPECT_EQ(sink.thread_sort["n:1 n:2"], 3);
  EXPECT_EQ(sink.process_labels["n:1"], (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(sink.skipped["metadata 'process_uptime_seconds'"], 1u);
  EXPECT_EQ(sink.skipped["metadata 'process_name' without its arg"], 1u);
}

TEST(ChromeJsonPhases, FlowsUseIdTextAndBindingPoint) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"s","name":"ipc","cat":"c","id":"0x1f","pid":1,"tid":1,"ts":1},
    {"ph":"t","name":"ipc","cat":"c","id":"0x1f","pid":2,"tid":2,"ts":2},
    {"ph":"f","name":"ipc","cat":"c","id":"0x1f","bp":"e","pid":3,"tid":3,"ts":3},
    {"ph":"s","name":"n","id":31,"pid":1,"tid":1,"ts":4},
    {"ph":"s","name":"g","id2":{"global":"0xa"},"pid":1,"tid":1,"ts":5},
    {"ph":"s","name":"l","id2":{"local":"0xa"},"pid":1,"tid":1,"ts":6},
    {"ph":"f","name":"noid","pid":1,"tid":1,"ts":7}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 6u);
  EXPECT_EQ(sink.events[0].event.kind, EventKind::kFlowStart);
  EXPECT_EQ(sink.events[1].event.kind, EventKind::kFlowStep);
  EXPECT_EQ(sink.events[2].event.kind, EventKind::kFlowEnd);
  EXPECT_EQ(sink.events[0].flow_id, "0x1f");
  EXPECT_EQ(sink.events[2].flow_id, "0x1f");
  EXPECT_EQ(sink.events[2].event.flags, kFlagBindEnclosing);
  EXPECT_EQ(sink.events[0].event.flags, 0u);
  EXPECT_EQ(sink.events[2].track, "thread n:3 n:3");
  EXPECT_EQ(sink.events[3].flow_id, "31");
  EXPECT_EQ(sink.events[4].flow_id, "0xa");
  EXPECT_EQ(sink.events[5].flow_id, "pid 1:0xa");
  EXPECT_EQ(sink.skipped["flow phase 'f' without id"], 1u);
}

TEST(ChromeJsonPhases, FlowV2BindIdOnCompleteEvents) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"X","name":"send","pid":1,"tid":1,"ts":1,"dur":2,"bind_id":"0x5","flow_out":true},
    {"ph":"X","name":"recv","pid":2,"tid":2,"ts":5,"dur":2,"bind_id":"0x5","flow_in":true},
    {"ph":"X","name":"plain","pid":2,"tid":2,"ts":8,"dur":1,"bind_id":"0x6"}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 3u);
  EXPECT_EQ(sink.events[0].flow_out, "0x5");
  EXPECT_EQ(sink.events[0].flow_in, "");
  EXPECT_EQ(sink.events[1].flow_in, "0x5");
  EXPECT_EQ(sink.events[1].flow_out, "");
  EXPECT_EQ(sink.events[2].event.flow_in, 0u);
  EXPECT_EQ(sink.events[2].event.flow_out, 0u);
}

TEST(ChromeJsonPhases, AsyncEventsMatchOnCategoryIdAndScope) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"b","name":"req","cat":"net","id":"0x1","pid":1,"tid":1,"ts":1},
    {"ph":"n","name":"req","cat":"net","id":"0x1","pid":1,"tid":2,"ts":2},
    {"ph":"e","name":"req","cat":"net","id":"0x1","pid":1,"tid":3,"ts":3},
    {"ph":"b","name":"req","cat":"disk","id":"0x1","pid":1,"tid":1,"ts":4},
    {"ph":"b","name":"req","cat":"net","id":"0x1","scope":"s2","pid":1,"tid":1,"ts":5},
    {"ph":"b","name":"loc","cat":"net","id2":{"local":"0x1"},"pid":1,"tid":1,"ts":6},
    {"ph":"b","name":"loc","cat":"net","id2":{"local":"0x1"},"pid":2,"tid":1,"ts":7},
    {"ph":"S","name":"old","cat":"net","id":"0x1","pid":1,"tid":1,"ts":8},
    {"ph":"T","name":"old","cat":"net","id":"0x1","pid":1,"tid":1,"ts":9},
    {"ph":"p","name":"old","cat":"net","id":"0x1","pid":1,"tid":1,"ts":10},
    {"ph":"F","name":"old","cat":"net","id":"0x1","pid":1,"tid":1,"ts":11},
    {"ph":"b","name":"noid","pid":1,"tid":1,"ts":12}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 11u);
  const auto& ev = sink.events;
  EXPECT_EQ(ev[0].event.kind, EventKind::kAsyncBegin);
  EXPECT_EQ(ev[1].event.kind, EventKind::kAsyncInstant);
  EXPECT_EQ(ev[2].event.kind, EventKind::kAsyncEnd);
  EXPECT_EQ(ev[0].event.flow_id, ev[1].event.flow_id);
  EXPECT_EQ(ev[0].event.flow_id, ev[2].event.flow_id);
  EXPECT_NE(ev[0].event.flow_id, ev[3].event.flow_id);  // other category
  EXPECT_NE(ev[0].event.flow_id, ev[4].event.flow_id);  // other scope
  EXPECT_NE(ev[5].event.flow_id, ev[6].event.flow_id);  // local ids per pid
  EXPECT_EQ(ev[0].track, "async n:1 req");
  EXPECT_EQ(ev[2].track, "async n:1 req");
  EXPECT_EQ(ev[5].track, "async n:1 loc");
  EXPECT_EQ(ev[7].event.kind, EventKind::kAsyncBegin);
  EXPECT_EQ(ev[8].event.kind, EventKind::kAsyncInstant);
  EXPECT_EQ(ev[9].event.kind, EventKind::kAsyncInstant);
  EXPECT_EQ(ev[10].event.kind, EventKind::kAsyncEnd);
  EXPECT_EQ(ev[7].event.flow_id, ev[10].event.flow_id);
  EXPECT_NE(ev[7].event.flow_id, ev[0].event.flow_id);  // legacy apart
  EXPECT_EQ(sink.skipped["async phase 'b' without id"], 1u);
}

TEST(ChromeJsonPhases, OtherPhasesAreCountedNotFatal) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"P","name":"sample","pid":1,"tid":1,"ts":1},
    {"ph":"O","name":"obj","id":"1","pid":1,"tid":1,"ts":1,"args":{"snapshot":{}}},
    {"ph":"O","name":"obj","id":"1","pid":1,"tid":1,"ts":2},
    {"ph":"v","name":"dump","pid":1,"tid":1,"ts":1},
    {"ph":"XX","name":"weird","pid":1,"tid":1,"ts":1},
    {"name":"no phase","pid":1,"tid":1,"ts":1},
    {"ph":"X","name":"no ts","pid":1,"tid":1,"dur":1},
    {"ph":"X","name":"ok","pid":1,"tid":1,"ts":1,"dur":1,"unknown":{"deep":[null,true,false]}}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.skipped["phase 'P'"], 1u);
  EXPECT_EQ(sink.skipped["phase 'O'"], 2u);
  EXPECT_EQ(sink.skipped["phase 'v'"], 1u);
  EXPECT_EQ(sink.skipped["phase 'XX'"], 1u);
  EXPECT_EQ(sink.skipped["event without ph"], 1u);
  EXPECT_EQ(sink.skipped["phase 'X' without ts"], 1u);
}

TEST(ChromeJsonIds, StringAndMissingPidsAndTids) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"X","name":"a","pid":"Browser","tid":"CrMain","ts":1,"dur":1},
    {"ph":"X","name":"b","ts":2,"dur":1},
    {"ph":"X","name":"c","pid":-1,"tid":18446744073709551615,"ts":3,"dur":1},
    {"ph":"X","name":"d","pid":1.5,"tid":null,"ts":4,"dur":1},
    {"ph":"X","name":"e","pid":"Browser","tid":"CrMain","ts":5,"dur":1}
  ])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 5u);
  EXPECT_EQ(sink.events[0].track, "thread s:Browser s:CrMain");
  EXPECT_EQ(sink.events[1].track, "thread n:0 n:0");
  EXPECT_EQ(sink.events[2].track, "thread n:-1 n:18446744073709551615");
  EXPECT_EQ(sink.events[3].track, "thread s:1.5 n:0");
  EXPECT_EQ(sink.events[4].event.track, sink.events[0].event.track);
}

TEST(ChromeJsonIds, NonStringNamesKeepTheirText) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([{"ph":"X","name":42,"cat":null,"pid":1,"tid":1,"ts":1,"dur":1},
                           {"ph":"X","name":"esc\"aped\n","pid":1,"tid":1,"ts":1,"dur":1}])",
                       &sink).ok());
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(sink.events[0].name, "42");
  EXPECT_EQ(sink.events[0].event.cat, 0u);
  EXPECT_EQ(sink.events[1].name, "esc\"aped\n");
}

TEST(ChromeJsonTopLevel, ObjectFormWithEventsLastKeepsOtherFields) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"({
    "otherData": {"version": "1.2", "nested": [1, {"a": "b"}]},
    "displayTimeUnit": "ns",
    "metadata": null,
    "systemTraceEvents": "# tracer: nop\n  <idle>-0 [000] 1.0: x\n",
    "traceEvents": [
      {"ph":"B","name":"a","pid":1,"tid":1,"ts":3.000},
      {"ph":"E","name":"a","pid":1,"tid":1,"ts":3.011}
    ],
    "schemaVersion": 1
  })", &sink).ok());
  ASSERT_EQ(sink.events.size(), 2u);
  // displayTimeUnit "ns" is display-only (as in catapult): ts stay in us.
  EXPECT_EQ(sink.events[1].event.ts - sink.events[0].event.ts, 11000);
  EXPECT_EQ(sink.fields["displayTimeUnit"], "\"ns\"");
  EXPECT_EQ(sink.fields["otherData"],
            R"({"version": "1.2", "nested": [1, {"a": "b"}]})");
  EXPECT_EQ(sink.fields["metadata"], "null");
  EXPECT_EQ(sink.fields["schemaVersion"], "1");
  EXPECT_EQ(sink.fields["systemTraceEvents"],
            R"("# tracer: nop\n  <idle>-0 [000] 1.0: x\n")");
  EXPECT_EQ(sink.skipped["systemTraceEvents (not parsed into events)"], 1u);
  ASSERT_EQ(sink.warnings.size(), 1u);
  EXPECT_THAT(sink.warnings[0], HasSubstr("systemTraceEvents"));
  EXPECT_EQ(sink.begin_calls, 1);
}

TEST(ChromeJsonTopLevel, BeginInputGetsPathAndHost) {
  CollectingSink sink;
  std::string path = WriteFile("host.json", "[]");
  ASSERT_TRUE(ReadChromeJson(path, "host7", &sink).ok());
  EXPECT_EQ(sink.path, path);
  EXPECT_EQ(sink.host, "host7");
  EXPECT_EQ(sink.begin_calls, 1);
  EXPECT_TRUE(sink.warnings.empty());
}

TEST(ChromeJsonTopLevel, ByteOrderMarkAndEmptyArrays) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText("\xef\xbb\xbf [ ] \n", &sink).ok());
  CollectingSink sink2;
  ASSERT_TRUE(ReadText(R"({"traceEvents":[]})", &sink2).ok());
  EXPECT_TRUE(sink2.events.empty());
}

TEST(ChromeJsonTopLevel, EscapedKeysAreUnescaped) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"({"trace\u0045vents":[{"p\u0068":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}],
                          "other\"key":1})", &sink).ok());
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].event.kind, EventKind::kSlice);
  EXPECT_EQ(sink.events[0].event.dur, 2000000);
  EXPECT_EQ(sink.fields["other\"key"], "1");
}

TEST(ChromeJsonTopLevel, HugeTopLevelFieldIsSkippedWithWarning) {
  std::string big = R"({"otherData":")" + std::string(17 << 20, 'x') +
                    R"(","traceEvents":[{"ph":"i","pid":1,"tid":1,"ts":1}]})";
  CollectingSink sink;
  ASSERT_TRUE(ReadText(big, &sink).ok());
  EXPECT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.fields.count("otherData"), 0u);
  EXPECT_EQ(sink.skipped["top-level field over 16 MiB"], 1u);
  ASSERT_EQ(sink.warnings.size(), 1u);
  EXPECT_THAT(sink.warnings[0], HasSubstr("over 16 MiB"));
}

// Real tracers that are killed leave the array open.
TEST(ChromeJsonTruncated, ArrayVariantsAreAccepted) {
  const std::string events =
      R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},
          {"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1})";
  for (std::string tail : {"", ",", ",\n\n  ", "\n\n", "]", ",]", ", ]\n"}) {
    SCOPED_TRACE("tail: '" + tail + "'");
    CollectingSink sink;
    ASSERT_TRUE(ReadText(events + tail, &sink).ok());
    EXPECT_EQ(sink.events.size(), 2u);
    EXPECT_EQ(sink.SkippedTotal(), 0u);
    bool closed = tail.find(']') != std::string::npos;
    EXPECT_EQ(sink.warnings.size(), closed ? 0u : 1u);
  }
}

TEST(ChromeJsonTruncated, EventCutMidwayIsSkippedWithWarning) {
  const std::string head =
      R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},)";
  for (std::string cut : {R"({"ph":"X","na)", R"({"ph":"X","name":"a\)",
                          R"({"ph":"X","args":{"a":[1,2)", R"({"ph":"X","ts":1)",
                          R"({"ph":"X","ts":1.)", R"({"ph":"X","ok":tr)", "{"}) {
    SCOPED_TRACE(cut);
    CollectingSink sink;
    std::string text = head + "\n " + cut;
    ASSERT_TRUE(ReadText(text, &sink).ok());
    EXPECT_EQ(sink.events.size(), 1u);
    EXPECT_EQ(sink.skipped["truncated event"], 1u);
    ASSERT_EQ(sink.warnings.size(), 1u);
    EXPECT_THAT(sink.warnings[0], HasSubstr("truncated at byte " + std::to_string(text.size())));
    EXPECT_THAT(sink.warnings[0], HasSubstr("from byte " + std::to_string(head.size() + 2)));
  }
}

TEST(ChromeJsonTruncated, ObjectFormCutInsideEvents) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"({"displayTimeUnit":"ms","traceEvents":[
      {"ph":"i","pid":1,"tid":1,"ts":1},
      {"ph":"i","pid":1,"tid":1,"ts":2},
      {"ph":"i","pid":1,"ti)", &sink).ok());
  EXPECT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(sink.skipped["truncated event"], 1u);
}

TEST(ChromeJsonGzip, GzipIsDetectedByMagicBytes) {
  std::string json = R"({"traceEvents":[{"ph":"X","name":"z","pid":1,"tid":1,"ts":1.25,"dur":2}]})";
  CollectingSink sink;
  // No .gz suffix: detection is by content.
  ASSERT_TRUE(ReadChromeJson(WriteFile("gz_trace.json", Gzip(json)), "", &sink).ok());
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].name, "z");
  EXPECT_EQ(sink.events[0].event.dur, 2000000);
}

TEST(ChromeJsonGzip, ConcatenatedMembersAndTruncatedStream) {
  std::string a = R"([{"ph":"i","pid":1,"tid":1,"ts":1},)";
  std::string b = R"({"ph":"i","pid":1,"tid":1,"ts":2}])";
  CollectingSink sink;
  ASSERT_TRUE(ReadChromeJson(WriteFile("cat.json.gz", Gzip(a) + Gzip(b)), "", &sink).ok());
  EXPECT_EQ(sink.events.size(), 2u);

  // A gzip file cut in the middle of its deflate data: the complete events
  // before the cut are read and the cut is reported.
  std::string many = "[";
  for (int i = 0; i < 20000; ++i) {
    many += R"({"ph":"i","pid":1,"tid":1,"ts":)" + std::to_string(i) + "},";
  }
  std::string gz = Gzip(many);
  CollectingSink cut;
  ASSERT_TRUE(ReadChromeJson(WriteFile("cut.json.gz", gz.substr(0, gz.size() / 2)), "", &cut).ok());
  EXPECT_GT(cut.events.size(), 100u);
  EXPECT_LT(cut.events.size(), 20000u);
  bool warned_gzip = false;
  for (const auto& w : cut.warnings) warned_gzip |= w.find("gzip stream ends early") != std::string::npos;
  EXPECT_TRUE(warned_gzip);
}

TEST(ChromeJsonStreaming, EventsAcrossChunkBoundariesAndLargeEvents) {
  // ~12 MiB: several 4 MiB chunks, events straddling every boundary, and one
  // event bigger than a chunk.
  std::string text = "[";
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    text += R"({"ph":"X","name":"slice)" + std::to_string(i % 97) +
            R"(","cat":"c","pid":1,"tid":)" + std::to_string(i % 5) +
            R"(,"ts":)" + std::to_string(i) + ".5" + R"(,"dur":0.25,"args":{"i":)" +
            std::to_string(i) + "}},\n";
    if (i == n / 2) {
      text += R"({"ph":"i","name":"big","pid":1,"tid":1,"ts":1,"args":{"blob":")" +
              std::string(5 << 20, 'b') + "\"}},\n";
    }
  }
  text += "]";
  CollectingSink sink;
  uint64_t last_done = 0, last_total = 0;
  int calls = 0;
  ReadOptions opts;
  opts.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_GE(done, last_done);
    last_done = done;
    last_total = total;
    ++calls;
  };
  ASSERT_TRUE(ReadChromeJson(WriteFile("chunks.json", text), "", &sink, opts).ok());
  ASSERT_EQ(sink.events.size(), static_cast<size_t>(n + 1));
  EXPECT_EQ(last_done, text.size());
  EXPECT_EQ(last_total, text.size());
  EXPECT_GE(calls, 3);
  for (int i = 0; i < n; i += 997) {
    size_t k = i <= n / 2 ? i : i + 1;
    EXPECT_EQ(sink.events[k].args, "{\"i\":" + std::to_string(i) + "}");
    EXPECT_TRUE(sink.AbsPs(sink.events[k].event.ts) ==
                static_cast<__int128>(i) * 1000000 + 500000);
  }
  EXPECT_EQ(sink.events[n / 2 + 1].args.size(), (5u << 20) + 11);
  // The one-entry thread cache must not hide track changes.
  EXPECT_EQ(sink.events[1].track, "thread n:1 n:1");
  EXPECT_EQ(sink.events[2].track, "thread n:1 n:2");
}

TEST(ChromeJsonSink, AddFailureStopsTheReader) {
  CollectingSink sink;
  sink.fail_after = 1;
  absl::Status s = ReadText(R"([{"ph":"i","pid":1,"tid":1,"ts":1},
                                {"ph":"i","pid":1,"tid":1,"ts":2},
                                {"ph":"i","pid":1,"tid":1,"ts":3}])", &sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(sink.events.size(), 1u);
}

}  // namespace
}  // namespace tracetable::testing_sink

namespace tracetable::testing_sink {
namespace {

// Perfetto's reading: an event without "tid" is on its process's main
// thread, whose tid is the pid.
TEST(ChromeJsonIds, MissingTidIsThePid) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([{"ph":"X","name":"a","pid":7,"ts":1,"dur":1},
                           {"ph":"X","name":"b","pid":"gpu","ts":1,"dur":1},
                           {"ph":"X","name":"c","pid":7,"tid":7,"ts":2,"dur":1},
                           {"ph":"M","name":"thread_name","pid":7,"args":{"name":"main"}}])",
                       &sink).ok());
  ASSERT_EQ(sink.events.size(), 3u);
  EXPECT_EQ(sink.events[0].track, "thread n:7 n:7");
  EXPECT_EQ(sink.events[1].track, "thread s:gpu s:gpu");
  EXPECT_EQ(sink.events[2].track, sink.events[0].track);
  EXPECT_EQ(sink.thread_names["n:7 n:7"], "main");
}

}  // namespace
}  // namespace tracetable::testing_sink

namespace tracetable::testing_sink {
namespace {

// Counter values quoted as strings read like quoted times.
TEST(ChromeJsonCounters, QuotedValuesAreNumbers) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([{"ph":"C","name":"mem","pid":1,"ts":1,
      "args":{"a":".75","b":"050","c":"-1.5e3","d":"12abc","e":"","f":"1e999","g":7}}])",
                       &sink).ok());
  std::map<std::string, double> got;
  for (const Collected& c : sink.events) got[c.name] = c.event.value;
  EXPECT_EQ(got, (std::map<std::string, double>{
                     {"a", 0.75}, {"b", 50}, {"c", -1500}, {"g", 7}}));
  EXPECT_EQ(sink.skipped["counter arg that is not a number"], 3u);
}

}  // namespace
}  // namespace tracetable::testing_sink

namespace tracetable::testing_sink {
namespace {

// Thread time (tts/tdur) reaches the sink exactly, in ps of the thread's own
// clock (not made relative like ts), on X, B/E and instants; elsewhere the
// events are kept and the loss counted.
TEST(ChromeJsonThreadTime, ReadOnXBeginEndAndInstants) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"tts":5.000001,"tdur":"1"},
                           {"ph":"B","name":"b","pid":1,"tid":1,"ts":4,"tts":6},
                           {"ph":"E","pid":1,"tid":1,"ts":5,"tts":6.5},
                           {"ph":"i","name":"i","pid":1,"tid":1,"ts":6,"tts":7},
                           {"ph":"X","name":"c","pid":1,"tid":1,"ts":9,"dur":1},
                           {"ph":"X","name":"d","pid":1,"tid":1,"ts":9,"dur":1,"tdur":0.5},
                           {"ph":"s","name":"f","id":1,"pid":1,"tid":1,"ts":9,"tts":8},
                           {"ph":"X","name":"e","pid":1,"tid":1,"ts":9,"dur":1,"tts":1e13}])",
                       &sink).ok());
  ASSERT_EQ(sink.events.size(), 8u);
  auto tt = [&](size_t i) {
    const Event& e = sink.events[i].event;
    return std::tuple(int{e.thread_time}, e.tts, e.tdur);
  };
  EXPECT_EQ(tt(0), std::tuple(kHasTts | kHasTdur, int64_t{5000001}, int64_t{1000000}));
  EXPECT_EQ(tt(1), std::tuple(int{kHasTts}, int64_t{6000000}, int64_t{0}));
  EXPECT_EQ(tt(2), std::tuple(int{kHasTts}, int64_t{6500000}, int64_t{0}));
  EXPECT_EQ(tt(3), std::tuple(int{kHasTts}, int64_t{7000000}, int64_t{0}));
  EXPECT_EQ(tt(4), std::tuple(0, int64_t{0}, int64_t{0}));
  EXPECT_EQ(tt(5), std::tuple(int{kHasTdur}, int64_t{0}, int64_t{500000}));
  EXPECT_EQ(tt(6), std::tuple(0, int64_t{0}, int64_t{0}));
  EXPECT_EQ(tt(7), std::tuple(0, int64_t{0}, int64_t{0}));
  EXPECT_EQ(sink.skipped["thread time (tts/tdur) on flow, async or counter events not stored; events kept"], 1u);
  EXPECT_EQ(sink.skipped["tts/tdur beyond int64 picoseconds (thread time not stored; events kept)"], 1u);
}

// A tts that is not a number is the event's error, as a bad ts is.
TEST(ChromeJsonThreadTime, BadTextIsAnError) {
  CollectingSink sink;
  ASSERT_TRUE(ReadText(R"([{"ph":"B","name":"b","pid":1,"tid":1,"ts":4,"tts":"6x"},
                           {"ph":"i","name":"i","pid":1,"tid":1,"ts":6,"tts":7}])", &sink).ok());
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].name, "i");
  EXPECT_EQ(sink.skipped["event with a bad time value"], 1u);
}

}  // namespace
}  // namespace tracetable::testing_sink
