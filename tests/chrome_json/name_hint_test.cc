// The parser's name hints (EventSink::PrefetchIntern, issue 14): in a batch,
// before an event is emitted, the next event's raw "name" is hinted. Hints
// must name the next events when they can, and never change what is read.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/chrome_json/collecting_sink.h"
#include "tests/chrome_json/test_util.h"

namespace tracetable::testing_sink {
namespace {

using ::testing::ElementsAre;

class HintRecordingSink : public CollectingSink {
 public:
  void PrefetchIntern(std::string_view s) override { hints.emplace_back(s); }
  std::vector<std::string> hints;
};

TEST(ChromeJsonNameHints, EachEventHintsTheNextOnesName) {
  HintRecordingSink sink;
  ASSERT_TRUE(ReadText(R"([
    {"ph":"X","pid":1,"tid":2,"ts":1,"dur":1,"name":"first-event-name.1"},
    {"ph":"X","pid":1,"tid":2,"ts":2,"dur":1,"name":"second-event-name.2","cat":"c"},
    {"name":"third-event-name.3","ph":"X","pid":1,"tid":2,"ts":3,"dur":1},
    {"ph":"X","pid":1,"tid":2,"ts":4,"dur":1,"name":"fourth\u002devent"},
    {"ph":"X","pid":1,"tid":2,"ts":5,"dur":1,"args":{"name":"inner"},"name":"fifth"},
    {"ph":"X","pid":1,"tid":2,"ts":6,"dur":1,"name": "sixth, spaced"}
  ])", &sink).ok());
  // The first event has no event before it; an escaped name is not hinted
  // (its raw text is not the string); the fifth's args come first and have
  // a "name", so its hint is wrong; the sixth's key is not followed directly
  // by a quote. None of it shows in what is read.
  EXPECT_THAT(sink.hints, ElementsAre("second-event-name.2", "third-event-name.3", "inner"));
  ASSERT_EQ(sink.events.size(), 6u);
  EXPECT_EQ(sink.events[0].name, "first-event-name.1");
  EXPECT_EQ(sink.events[3].name, "fourth-event");
  EXPECT_EQ(sink.events[4].name, "fifth");
  EXPECT_EQ(sink.events[4].args, R"({"name":"inner"})");
  EXPECT_EQ(sink.events[5].name, "sixth, spaced");
}

}  // namespace
}  // namespace tracetable::testing_sink
