// A bad event is skipped, not fatal: it is counted by reason, reported with
// the file and byte offset, and reading resumes at the next event. --strict
// (ReadOptions::strict) makes the same inputs fail; damage to the container
// fails either way.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/chrome_json/reader.h"
#include "tests/chrome_json/collecting_sink.h"
#include "tests/chrome_json/test_util.h"

namespace tracetable::testing_sink {
namespace {

using ::testing::HasSubstr;

std::string Good(int ts) {
  return R"({"ph":"X","name":"ok","pid":1,"tid":1,"ts":)" + std::to_string(ts) +
         R"(,"dur":1})";
}

struct Case {
  const char* bad;     // the damaged event
  const char* reason;  // what it is counted as
};

// Each bad event between good ones, at the front, middle and end, in a run
// long enough for the batched fast path and alone.
TEST(ChromeJsonSkip, BadEventIsSkippedAndTheRestKept) {
  const Case cases[] = {
      {R"({"ph":"X","name":"t","pid":1,"tid":1,"ts":"100a","dur":1})", "event with a bad time value"},
      {R"({"ph":"X","name":"t","pid":1,"tid":1,"ts":5,"dur":"abc"})", "event with a bad time value"},
      {R"({"ph":"X","name":"t","pid":1,"tid":1,"ts":true})", "event with a bad time value"},
      {R"({"ph":"X","name":"t","pid":1,"tid":1,"ts":5,"dur":1,"args":{"a":1,}})", "event with broken JSON"},
      {R"({"ph":"X","name":"t","pid":1,"tid":1,"ts":5,"dur":1,"args":{"a":[1,2,],}})", "event with broken JSON"},
      {"{\"ph\":\"X\",\"name\":\"line\nbreak\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1}", "event with broken JSON"},
      {R"({"ph":"X","name":"say "hi" now","pid":1,"tid":1,"ts":5,"dur":1})", "event with broken JSON"},
      {R"({"ph":"X","name":"a\qb","pid":1,"tid":1,"ts":5,"dur":1})", "event with broken JSON"},
      {R"({"ph":"X","name":"unterminated,"pid":1,"tid":1,"ts":5,"dur":1})", "event with broken JSON"},
      // Objects in the damaged event's args are not taken for events.
      {R"({"ph":"X","name":"5" screen","args":{"l":[{"x":1}, {"y":2}, {"z":3}]},"ts":5})", "event with broken JSON"},
      {"{\"ph\":\"X\",\"name\":\"a\xff\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1}", "event with invalid UTF-8"},
      {R"({"ph":"C","name":"c","pid":1,"ts":5,"args":{"v":1e999}})", "event with a number out of range"},
  };
  for (const Case& c : cases) {
    for (int before : {0, 1, 300}) {
      for (int after : {0, 1, 300}) {
        SCOPED_TRACE(std::string(c.bad) + " before=" + std::to_string(before) +
                     " after=" + std::to_string(after));
        std::string text = "{\"traceEvents\":[\n";
        for (int i = 0; i < before; ++i) text += Good(i) + ",\n";
        const size_t bad_at = text.size();
        text += c.bad;
        for (int i = 0; i < after; ++i) text += ",\n" + Good(1000 + i);
        text += "\n],\"otherData\":{\"v\":1}}";

        CollectingSink sink;
        absl::Status s = ReadText(text, &sink);
        ASSERT_TRUE(s.ok()) << s;
        EXPECT_EQ(sink.events.size(), static_cast<size_t>(before + after));
        for (const Collected& e : sink.events) EXPECT_EQ(e.name, "ok");
        EXPECT_EQ(sink.skipped[c.reason], 1u);
        EXPECT_EQ(sink.SkippedTotal(), 1u);
        EXPECT_EQ(sink.fields.count("otherData"), 1u);  // read on past the array
        ASSERT_EQ(sink.warnings.size(), 1u);
        EXPECT_THAT(sink.warnings[0], HasSubstr(sink.path + ": byte "));
        EXPECT_THAT(sink.warnings[0],
                    HasSubstr("skipped the event from byte " + std::to_string(bad_at)));

        CollectingSink strict_sink;
        ReadOptions strict;
        strict.strict = true;
        s = ReadChromeJson(sink.path, "", &strict_sink, strict);
        EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
        EXPECT_THAT(std::string(s.message()), HasSubstr(sink.path + ": byte "));
      }
    }
  }
}

TEST(ChromeJsonSkip, SeveralBadEventsAreCountedAndTheFirstReported) {
  std::string text = "[";
  for (int i = 0; i < 40; ++i) {
    text += Good(2 * i) + ",";
    text += R"({"ph":"X","pid":1,"tid":1,"ts":"x)" + std::to_string(i) + R"("},)";
  }
  text += Good(100) + "]";
  CollectingSink sink;
  ASSERT_TRUE(ReadText(text, &sink).ok());
  EXPECT_EQ(sink.events.size(), 41u);
  EXPECT_EQ(sink.skipped["event with a bad time value"], 40u);
  // Not one warning per event: a trace with a million bad ones stays readable.
  EXPECT_GE(sink.warnings.size(), 1u);
  EXPECT_LE(sink.warnings.size(), 10u);
}

// A bad event among thousands of good ones, across several 4 MiB windows.
TEST(ChromeJsonSkip, ResyncAcrossWindows) {
  std::string text = "[";
  int good = 0, bad = 0;
  while (text.size() < (10u << 20)) {
    // A stray quote (odd count) pairs with the next one, far away: the
    // events between must not be swallowed with the bad one.
    if (good % 20000 == 10) {
      text += R"({"ph":"X","name":"5" screen","pid":1,"tid":1,"ts":1,"dur":1},)";
      ++bad;
    }
    text += Good(good++) + ",";
  }
  text += Good(good++) + "]";
  CollectingSink sink;
  ASSERT_TRUE(ReadText(text, &sink).ok());
  EXPECT_EQ(sink.events.size(), static_cast<size_t>(good));
  EXPECT_EQ(sink.skipped["event with broken JSON"], static_cast<uint64_t>(bad));
  EXPECT_GE(bad, 4);
}

// The separators and the top-level object are not an event: damage there
// is an error even without --strict.
TEST(ChromeJsonSkip, ContainerDamageStillFails) {
  for (std::string text : {Good(1) + " " + Good(2) + "]", Good(1) + ",," + Good(2) + "]",
                           Good(1) + "] x"}) {
    SCOPED_TRACE(text);
    CollectingSink sink;
    absl::Status s = ReadText("[" + text, &sink);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(sink.path + ": byte "));
  }
  for (std::string text : {R"({"a" 1, "traceEvents":[]})", R"({"otherData": {"a":}, "traceEvents":[]})",
                           R"({"traceEvents": {}})"}) {
    SCOPED_TRACE(text);
    CollectingSink sink;
    EXPECT_EQ(ReadText(text, &sink).code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(ChromeJsonSkip, StrictFailsOnTruncation) {
  ReadOptions strict;
  strict.strict = true;
  for (std::string text : {"[" + Good(1) + "," + Good(2), "[" + Good(1) + R"(,{"ph":"X","na)",
                           "{\"traceEvents\":[" + Good(1) + "]"}) {
    SCOPED_TRACE(text);
    CollectingSink sink;
    EXPECT_TRUE(ReadText(text, &sink).ok());
    EXPECT_EQ(sink.warnings.size(), 1u);
    CollectingSink strict_sink;
    absl::Status s = ReadChromeJson(sink.path, "", &strict_sink, strict);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--strict"));
  }
}

}  // namespace
}  // namespace tracetable::testing_sink

namespace tracetable::testing_sink {
namespace {

// Deep nesting inside an event is that event's error, not a stack overflow.
TEST(ChromeJsonSkip, DeepNestingInsideAnEventIsSkipped) {
  const int d = 40000;
  const std::string arrays = std::string(d, '[') + std::string(d, ']');
  std::string objects;
  for (int i = 0; i < d; ++i) objects += "{\"a\":";
  objects += "1" + std::string(d, '}');
  const std::string bad[] = {
      R"({"ph":"X","name":"d","pid":1,"tid":1,"ts":2,"dur":1,"args":{"a":)" + arrays + "}}",
      R"({"ph":"X","name":"d","pid":1,"tid":1,"ts":2,"dur":1,"args":{"a":)" + objects + "}}",
      R"({"ph":"M","name":"process_name","pid":1,"args":{"name":)" + arrays + "}}",
      R"({"ph":"C","name":"c","pid":1,"ts":2,"args":{"v":)" + objects + "}}",
      R"({"ph":"b","name":"a","pid":1,"ts":2,"id2":)" + objects + "}",
  };
  ReadOptions strict;
  strict.strict = true;
  for (const std::string& b : bad) {
    SCOPED_TRACE(b.substr(0, 60));
    CollectingSink sink;
    ASSERT_TRUE(ReadText("[" + Good(1) + ",\n" + b + ",\n" + Good(3) + "]", &sink).ok());
    EXPECT_EQ(sink.events.size(), 2u);
    EXPECT_EQ(sink.skipped["event nested over 1024 levels deep"], 1u);
    ASSERT_EQ(sink.warnings.size(), 1u);
    EXPECT_THAT(sink.warnings[0], HasSubstr("expected nesting under 1024 levels"));
    CollectingSink strict_sink;
    absl::Status s = ReadChromeJson(sink.path, "", &strict_sink, strict);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  }
}

}  // namespace
}  // namespace tracetable::testing_sink
