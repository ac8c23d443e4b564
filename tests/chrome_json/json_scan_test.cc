// The byte-level helpers, checked against simdjson's DOM parser as an
// independent judge of what is valid JSON.
#include <simdjson.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ingest/chrome_json/json_scan.h"

namespace tracetable::chrome_json {
namespace {

const std::vector<std::string>& Samples() {
  static const std::vector<std::string> samples = {
      R"({})", R"([])", R"({"a":1})", R"({"a":[1,2,{"b":null}],"c":"x\"}"})",
      R"("str")", R"("a\\")", R"(-0.5e+10)", R"(true)", R"(null)",
      R"({"k":"\u00e9\n"})", R"([1,[2,[3,[4]]]])", R"({"a":"}]"})",
      // invalid
      R"({"a":})", R"({"a" 1})", R"({,})", R"([1,])", R"({"a":1,})", R"([1 2])",
      R"({"a":tru})", R"({"a":01})", R"({"a":1.})", R"({"a":-})", R"({"a":"\x"})",
      R"({"a":"\u12g4"})", R"({"a":[}])", R"([{]})", R"({"a":1}})", R"({"a":1} x)",
      R"(nul)", R"()", "{\"a\":\"\x01\"}", R"({'a':1})", R"({"a":1e})", R"(+1)",
  };
  return samples;
}

TEST(JsonScan, SyntaxCheckerAgreesWithSimdjson) {
  simdjson::dom::parser parser;
  for (const std::string& s : Samples()) {
    SCOPED_TRACE(s);
    simdjson::dom::element el;
    bool simd_ok = parser.parse(s).get(el) == simdjson::SUCCESS;
    bool ours_ok = !FindJsonSyntaxError(s, PrefixMode::kComplete).has_value();
    EXPECT_EQ(ours_ok, simd_ok);
  }
}

TEST(JsonScan, EveryPrefixOfValidJsonIsAValidPrefix) {
  for (const std::string& s : Samples()) {
    if (FindJsonSyntaxError(s, PrefixMode::kComplete)) continue;
    for (size_t n = 0; n <= s.size(); ++n) {
      EXPECT_FALSE(FindJsonSyntaxError(s.substr(0, n), PrefixMode::kPrefixOk))
          << s.substr(0, n);
    }
  }
}

TEST(JsonScan, SyntaxErrorsHaveExactOffsets) {
  auto e = FindJsonSyntaxError(R"({"a":1 "b":2})", PrefixMode::kPrefixOk);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset, 7u);
  EXPECT_EQ(e->expected, "',' or '}'");
  EXPECT_EQ(e->got, "'\"'");
  e = FindJsonSyntaxError(R"({"a":[1,2)", PrefixMode::kComplete);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset, 9u);
  EXPECT_EQ(e->got, "end of file");
}

TEST(JsonScan, ScanValueFindsEndsAndResumesByteByByte) {
  struct Case {
    std::string text;
    size_t end;  // bytes of the first value
  };
  std::vector<Case> cases = {
      {R"({"a":"}\"{"} ,)", 12},
      {R"([1,[2],{"x":"]"}],)", 17},
      {R"("s\\"x)", 5},
      {R"(123,)", 3},
      {R"({"a":{"b":{}}}{})", 14},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ScanState whole;
    EXPECT_EQ(ScanValue(whole, c.text.data(), c.text.size()), c.end);
    EXPECT_TRUE(whole.done);
    ScanState pieces;
    size_t total = 0;
    for (size_t i = 0; i < c.text.size() && !pieces.done; ++i) {
      total += ScanValue(pieces, c.text.data() + i, 1);
    }
    EXPECT_TRUE(pieces.done);
    EXPECT_EQ(total, c.end);
  }
  ScanState open;
  std::string unclosed = R"({"a":[1,2)";
  EXPECT_EQ(ScanValue(open, unclosed.data(), unclosed.size()), unclosed.size());
  EXPECT_FALSE(open.done);
}

TEST(JsonScan, Utf8Locator) {
  EXPECT_EQ(FindInvalidUtf8("abc"), 3u);
  EXPECT_EQ(FindInvalidUtf8("a\xc3\xa9z"), 4u);
  EXPECT_EQ(FindInvalidUtf8("ab\xff"), 2u);
  EXPECT_EQ(FindInvalidUtf8("a\xc0\x80"), 1u);      // overlong
  EXPECT_EQ(FindInvalidUtf8("a\xed\xa0\x80"), 1u);  // surrogate
  EXPECT_EQ(FindInvalidUtf8("a\xe2\x82"), 1u);      // cut
}

}  // namespace
}  // namespace tracetable::chrome_json
