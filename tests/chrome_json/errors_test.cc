// Bad input. With --strict every case fails (never crashes or hangs) with a
// message that names the file, the byte offset and what was expected. By
// default a bad event is skipped, counted by reason and reported; damage to
// the container still fails.
#include <filesystem>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/chrome_json/reader.h"
#include "tests/chrome_json/collecting_sink.h"
#include "tests/chrome_json/test_util.h"

namespace tracetable::testing_sink {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

ReadOptions Strict() {
  ReadOptions o;
  o.strict = true;
  return o;
}

// Reads `text` strictly and expects InvalidArgument "<path>: byte <offset>:
// expected <expected>..., got <got>".
void ExpectError(const std::string& text, size_t offset,
                 const std::string& expected, const std::string& got = "",
                 const ReadOptions& options = Strict()) {
  CollectingSink sink;
  std::string path = WriteFile("bad.json", text);
  absl::Status s = ReadChromeJson(path, "", &sink, options);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  std::string msg(s.message());
  EXPECT_THAT(msg, StartsWith(path + ": byte " + std::to_string(offset) + ": expected "));
  EXPECT_THAT(msg, HasSubstr(expected));
  if (!got.empty()) {
    EXPECT_THAT(msg, HasSubstr(", got " + got));
  }
}

const char kGood[] = R"({"ph":"i","pid":1,"tid":1,"ts":1})";

TEST(ChromeJsonErrors, SyntaxErrorInTheMiddle) {
  std::string t = std::string("[") + kGood + ",\n" + R"({"ph":"i",,"ts":2})" +
                  ",\n" + kGood + "]";
  ExpectError(t, t.find(",,") + 1, "a string key", "','");
}

TEST(ChromeJsonErrors, MissingCommaBetweenEvents) {
  std::string t = std::string("[") + kGood + " " + kGood + "]";
  ExpectError(t, 1 + std::string(kGood).size() + 1, "',' or ']' after an event", "'{'");
}

TEST(ChromeJsonErrors, UnbalancedQuoteIsNotMistakenForTruncation) {
  std::string t = std::string("[") + R"({"ph":"i","name":"abc,"pid":1,"tid":1,"ts":1})" +
                  ",\n" + kGood + ",\n" + kGood + "]";
  ExpectError(t, t.find("abc,\"") + 5, "',' or '}'", "'p'");
}

TEST(ChromeJsonErrors, MismatchedBrackets) {
  std::string t = std::string("[") + R"({"ph":"i","args":[1}, "pid":1})" + ",\n" + kGood + "]";
  ExpectError(t, t.find("1}") + 1, "',' or ']'", "'}'");
}

TEST(ChromeJsonErrors, InvalidUtf8) {
  std::string t = std::string("[") + R"({"ph":"i","name":"a)" + "\xff" +
                  R"(","pid":1,"tid":1,"ts":1})" + "," + kGood + "]";
  ExpectError(t, t.find('\xff'), "valid UTF-8", "byte 0xff");
}

TEST(ChromeJsonErrors, InvalidEscapeAndControlCharacter) {
  std::string t = std::string("[") + R"({"ph":"i","name":"a\qb","pid":1,"ts":1})" + "]";
  ExpectError(t, t.find("\\q") + 1, "an escape character", "'q'");
  std::string u = std::string("[") + "{\"ph\":\"i\",\"name\":\"a\nb\",\"ts\":1}" + "]";
  ExpectError(u, u.find('\n'), "control characters must be escaped", "byte 0x0a");
}

TEST(ChromeJsonErrors, TimeOutOfRange) {
  std::string t = std::string("[") + R"({"ph":"i","pid":1,"tid":1,"ts":1e30})" + "]";
  ExpectError(t, t.find("1e30"), "within int64 nanoseconds", "'1e30'");
  // In range for the format but too far from the first event for the table.
  std::string u = std::string("[") + kGood + "," +
                  R"({"ph":"i","pid":1,"tid":1,"ts":100000000000000})" + "]";
  ExpectError(u, u.find("100000000000000"), "time range", "'100000000000000'");
  std::string d = std::string("[") + R"({"ph":"X","ts":1,"dur":1e20})" + "]";
  ExpectError(d, d.find("1e20"), "\"dur\"", "'1e20'");
}

TEST(ChromeJsonErrors, BadTimeText) {
  std::string t = std::string("[") + R"({"ph":"i","ts":"soon"})" + "]";
  ExpectError(t, t.find("\"soon\""), "microseconds for \"ts\"", "'soon'");
  std::string u = std::string("[") + R"({"ph":"i","ts":true})" + "]";
  ExpectError(u, u.find("true"), "a number for \"ts\"", "'true'");
  std::string v = std::string("[") + R"({"ph":"i","ts":01})" + "]";
  ExpectError(v, v.find("01"), "a JSON number", "'01'");
}

TEST(ChromeJsonErrors, NumberOutOfDoubleRangeInArgs) {
  std::string t = std::string("[") + R"({"ph":"C","name":"c","ts":1,"args":{"v":1e999}})" + "]";
  ExpectError(t, t.find("1e999"), "a number within the range of a double", "'1e999'");
}

TEST(ChromeJsonErrors, EmptyWhitespaceAndNotJson) {
  ExpectError("", 0, "a JSON array or object", "an empty file");
  ExpectError(" \n\t ", 4, "a JSON array or object", "only whitespace");
  ExpectError("hello world", 0, "'[' or '{'", "'h'");
  ExpectError("\x89PNG\r\n", 0, "'[' or '{'", "byte 0x89");
}

TEST(ChromeJsonErrors, TrailingGarbage) {
  std::string t = std::string("[") + kGood + "] x";
  ExpectError(t, t.size() - 1, "end of input", "'x'");
}

TEST(ChromeJsonErrors, TopLevelObjectProblems) {
  ExpectError(R"({"a":1})", 6, "a \"traceEvents\" array", "an object without one");
  ExpectError(R"({"traceEvents": {}})", 16, "'[' starting the traceEvents array", "'{'");
  std::string t = R"({"otherData": {"a":}, "traceEvents":[]})";
  ExpectError(t, t.find("}"), "a JSON value", "'}'");
  ExpectError(R"({"a" 1})", 5, "':' after a key", "'1'");
  ExpectError(R"({1:2})", 1, "a string key", "'1'");
  // Cut before any events were seen: nothing usable.
  std::string cut = R"({"otherData": {"a":1}, "trace)";
  ExpectError(cut, cut.size(), "a \"traceEvents\" array", "end of file");
}

TEST(ChromeJsonErrors, BadNonObjectElements) {
  std::string t = "[1, tru, {}]";
  ExpectError(t, 7, "'true'");
  std::string u = std::string("[") + kGood + ",," + kGood + "]";
  ExpectError(u, u.find(",,") + 1, "an event object", "','");
}

TEST(ChromeJsonErrors, DirectoryAndMissingFile) {
  CollectingSink sink;
  std::string dir = TempPath("a_directory");
  std::filesystem::create_directories(dir);
  absl::Status s = ReadChromeJson(dir, "", &sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith(dir + ": byte 0: expected"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("directory"));
  std::string missing = TempPath("missing.json");
  s = ReadChromeJson(missing, "", &sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), StartsWith(missing + ": "));
  EXPECT_EQ(sink.begin_calls, 0);
}

TEST(ChromeJsonErrors, CorruptGzip) {
  std::string json = "[";
  for (int i = 0; i < 5000; ++i) {
    json += R"({"ph":"X","name":"n)" + std::to_string(i * 7919 % 1000) +
            R"(","pid":1,"tid":1,"ts":)" + std::to_string(i) + R"(,"dur":1},)";
  }
  json += "]";
  std::string gz = Gzip(json);
  for (size_t i = gz.size() / 3; i < gz.size() / 3 + 64; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  CollectingSink sink;
  std::string path = WriteFile("corrupt.json.gz", gz);
  absl::Status s = ReadChromeJson(path, "", &sink);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), StartsWith(path + ": decompressed byte "));
  EXPECT_THAT(std::string(s.message()), HasSubstr(": expected "));

  // Only a gzip header: deflate data that is not deflate.
  std::string bad = std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) +
                    std::string(100, '\xff');
  CollectingSink sink2;
  std::string path2 = WriteFile("bad.gz", bad);
  s = ReadChromeJson(path2, "", &sink2);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()),
              StartsWith(path2 + ": decompressed byte 0: expected a valid gzip stream, got zlib error"));
}

TEST(ChromeJsonErrors, OversizedEventIsAnErrorNotAHang) {
  // An unclosed bracket swallowing the rest of a large file.
  std::string t = R"([{"ph":"i","args":[)";
  t.reserve(80u << 20);
  while (t.size() < (70u << 20)) t += "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,";
  CollectingSink sink;
  std::string path = WriteFile("huge.json", t);
  absl::Status s = ReadChromeJson(path, "", &sink, Strict());
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), StartsWith(path + ": byte 1: expected an event object under 64 MiB"));
  // Without --strict: skipped, and said so; no event after it is invented.
  CollectingSink lenient;
  s = ReadChromeJson(path, "", &lenient);
  std::filesystem::remove(path);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(lenient.events.size(), 0u);
  EXPECT_EQ(lenient.skipped["event over 64 MiB (an unclosed string?)"], 1u);
  ASSERT_FALSE(lenient.warnings.empty());
  EXPECT_THAT(lenient.warnings[0], HasSubstr("the rest of the input was skipped"));
}

// Random damage to a valid trace: the reader must return either OK or a
// well-formed InvalidArgument, never crash or hang. Run under ASan too.
TEST(ChromeJsonErrors, MutatedTracesFailCleanly) {
  const std::string base = R"({"otherData":{"v":"1"},"traceEvents":[
    {"ph":"X","name":"a\"b","cat":"c","pid":1,"tid":2,"ts":1.5,"dur":2,"args":{"k":[1,2.5e3,"s",null,true]}},
    {"ph":"C","name":"mem","pid":1,"ts":2,"args":{"heap":10}},
    {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}},
    {"ph":"b","name":"req","cat":"n","id2":{"local":"0x1"},"pid":1,"tid":2,"ts":3},
    {"ph":"s","id":"7","pid":"p","tid":"t","ts":4,"bp":"e"}
  ],"displayTimeUnit":"ns"})";
  std::mt19937 rng(1234);
  const char alphabet[] = "{}[]\",:0123456789.e-+ \n\\tnulfasXBE\xff\xc3";
  int ok = 0, failed = 0;
  for (int round = 0; round < (getenv("CJ_ROUNDS") ? atoi(getenv("CJ_ROUNDS")) : 600); ++round) {
    std::string t = base;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0: t[at] = alphabet[rng() % (sizeof(alphabet) - 1)]; break;
        case 1: t.erase(at, 1 + rng() % 4); break;
        default: t.insert(at, 1, alphabet[rng() % (sizeof(alphabet) - 1)]); break;
      }
    }
    if (rng() % 4 == 0) t.resize(rng() % t.size());
    CollectingSink sink;
    std::string path = WriteFile("mutant.json", t);
    if (getenv("CJ_DUMP")) std::fprintf(stderr, "MUTANT %s\n", path.c_str());
    // Lenient reading may skip events but never fails differently.
    CollectingSink lenient;
    absl::Status l = ReadChromeJson(path, "", &lenient);
    if (!l.ok()) {
      ASSERT_EQ(l.code(), absl::StatusCode::kInvalidArgument) << l << "\n" << t;
      EXPECT_THAT(std::string(l.message()), testing::MatchesRegex(
          ".*: byte [0-9]+: expected .*, got .*")) << t;
    }
    absl::Status s = ReadChromeJson(path, "", &sink, Strict());
    if (s.ok()) {
      ++ok;
      EXPECT_TRUE(l.ok()) << l << "\n" << t;
      continue;
    }
    ++failed;
    ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s << "\n" << t;
    EXPECT_THAT(std::string(s.message()), testing::MatchesRegex(
        ".*: byte [0-9]+: expected .*, got .*")) << t;
  }
  EXPECT_GT(ok, 10);
  EXPECT_GT(failed, 100);
}

}  // namespace
}  // namespace tracetable::testing_sink
