// The byte-level helpers, checked against simdjson's DOM parser as an
// independent judge of what is valid JSON.
#include <simdjson.h>

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "format/time.h"
#include "ingest/chrome_json/event_parser.h"
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

TEST(ChromeJsonScan, SyntaxCheckerAgreesWithSimdjson) {
  simdjson::dom::parser parser;
  for (const std::string& s : Samples()) {
    SCOPED_TRACE(s);
    simdjson::dom::element el;
    bool simd_ok = parser.parse(s).get(el) == simdjson::SUCCESS;
    bool ours_ok = !FindJsonSyntaxError(s, PrefixMode::kComplete).has_value();
    EXPECT_EQ(ours_ok, simd_ok);
  }
}

TEST(ChromeJsonScan, EveryPrefixOfValidJsonIsAValidPrefix) {
  for (const std::string& s : Samples()) {
    if (FindJsonSyntaxError(s, PrefixMode::kComplete)) continue;
    for (size_t n = 0; n <= s.size(); ++n) {
      EXPECT_FALSE(FindJsonSyntaxError(s.substr(0, n), PrefixMode::kPrefixOk))
          << s.substr(0, n);
    }
  }
}

TEST(ChromeJsonScan, SyntaxErrorsHaveExactOffsets) {
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

TEST(ChromeJsonScan, ScanValueFindsEndsAndResumesByteByByte) {
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

TEST(ChromeJsonScan, Utf8Locator) {
  EXPECT_EQ(FindInvalidUtf8("abc"), 3u);
  EXPECT_EQ(FindInvalidUtf8("a\xc3\xa9z"), 4u);
  EXPECT_EQ(FindInvalidUtf8("ab\xff"), 2u);
  EXPECT_EQ(FindInvalidUtf8("a\xc0\x80"), 1u);      // overlong
  EXPECT_EQ(FindInvalidUtf8("a\xed\xa0\x80"), 1u);  // surrogate
  EXPECT_EQ(FindInvalidUtf8("a\xe2\x82"), 1u);      // cut
}

// The fast time path must agree with format/time.h's ParseMicros exactly.
TEST(ChromeJsonFastMicros, AgreesWithParseMicros) {
  std::mt19937_64 rng(7);
  std::vector<std::string> texts = {"0", "1", "0.5", "1680000000000.123456",
                                    "1680000000000.1234569", "999999999999999.999999",
                                    "9999999999999999", "9223372036854774.999999", "9223372036854775.0",
                                    "1700000000000739.791", "1.", ".5", "1e3", "-1.5", "00.1",
                                    "12.3456789012", "0.000001", "0.0000009", "1.5x", ""};
  for (int i = 0; i < 20000; ++i) {
    std::string t = std::to_string(rng() % 100000000000000000ULL >> (rng() % 60));
    if (rng() % 2) {
      t += ".";
      int digits = static_cast<int>(rng() % 12);
      for (int k = 0; k < digits; ++k) t += static_cast<char>('0' + rng() % 10);
    }
    texts.push_back(t);
  }
  int fast = 0;
  for (const std::string& t : texts) {
    SCOPED_TRACE(t);
    absl::StatusOr<NsPs> want = ParseMicros(t);
    absl::StatusOr<NsPs> got = ParseMicrosText(t);
    ASSERT_EQ(got.ok(), want.ok());
    if (want.ok()) {
      EXPECT_EQ(got->ns, want->ns);
      EXPECT_EQ(got->ps, want->ps);
    }
    fast += FastMicros(t).has_value();
  }
  EXPECT_GT(fast, 15000);  // the fast path is actually taken
}

}  // namespace
}  // namespace tracetable::chrome_json

namespace tracetable::chrome_json {
namespace {

TEST(ChromeJsonScan, CompleteElementsAgreeAcrossInstructionSets) {
  std::mt19937_64 rng(3);
  // Backslashes and quotes only inside whole strings, as in any JSON text
  // (outside strings the scanners may differ, harmlessly).
  const std::string pieces[] = {"{", "}", "[", "]", ",", "a", " ", "\"x\\\"}\"", "\"\\\\\"",
                                "\"[{\"", "\"\\\\\\\"]\"",
                                R"({"ph":"X","name":"a\\","args":{"k":[1,{"z":"]"}]}})"};
  const ScanIsa simd[] = {ScanIsa::kSse2, ScanIsa::kAvx2};
  int compared = 0;
  for (int round = 0; round < 3000; ++round) {
    // Up to ~20 blocks of 64 bytes: strings and escapes cross blocks.
    std::string text;
    int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) text += pieces[rng() % std::size(pieces)];
    SCOPED_TRACE(text);
    const size_t want = ScanCompleteElementsWith(ScanIsa::kBytes, text.data(), text.size());
    for (ScanIsa isa : simd) {
      if (!ScanIsaSupported(isa)) continue;
      EXPECT_EQ(ScanCompleteElementsWith(isa, text.data(), text.size()), want) << static_cast<int>(isa);
      ++compared;
    }
    EXPECT_EQ(ScanCompleteElements(text.data(), text.size()), want);
  }
  EXPECT_GT(compared, 0) << "no SIMD scanner on this machine";
  std::string events = R"({"a":"}"},{"b":[1,2]} , {"c":{}}] trailing)";
  EXPECT_EQ(ScanCompleteElements(events.data(), events.size()), events.rfind(']'));
  std::string cut = R"({"a":1},{"b":)";
  EXPECT_EQ(ScanCompleteElements(cut.data(), cut.size()), 7u);
  EXPECT_EQ(ScanCompleteElements(cut.data() + 8, cut.size() - 8), 0u);
}

}  // namespace
}  // namespace tracetable::chrome_json
