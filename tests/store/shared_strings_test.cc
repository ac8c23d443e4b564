// SharedStrings (store/shared_strings.h): threads interning at once get one
// id per distinct text and every text back from its id; TableBuilder ids
// given through it follow first use, as plain interning gives them.
#include "store/shared_strings.h"

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracetable {
namespace {

TEST(SharedStrings, ThreadsAgreeOnIdsAndTexts) {
  SharedStrings strings;
  EXPECT_EQ(strings.Intern(""), 0u);
  constexpr int kThreads = 4, kTexts = 19997;  // prime: each thread's order below visits every text
  // Every thread interns every text, each in its own order, twice; short
  // (inline), long (heap) and decimal texts (interned by value).
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kTexts));
  auto text = [](int i) {
    if (i % 3 == 0) return absl::StrCat("long text number ", i, " past any inline buffer");
    return i % 3 == 1 ? absl::StrCat(uint64_t{2654435761} * i) : absl::StrCat("n", i);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2; ++round) {
        for (int k = 0; k < kTexts; ++k) {
          const int i = (k * (2 * t + 1) + t * 977) % kTexts;
          const uint32_t id = strings.Intern(text(i));
          if (round == 1) {
            EXPECT_EQ(id, ids[t][i]) << i;
          }
          ids[t][i] = id;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  std::set<uint32_t> distinct;
  for (int i = 0; i < kTexts; ++i) {
    for (int t = 1; t < kThreads; ++t) ASSERT_EQ(ids[t][i], ids[0][i]) << i;
    EXPECT_NE(ids[0][i], 0u);
    distinct.insert(ids[0][i]);
    EXPECT_EQ(strings.Text(ids[0][i]), text(i));
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kTexts));
  EXPECT_EQ(strings.Text(0), "");
}

// Decimal texts are found by their value: texts that differ only in how
// they spell a number (leading zeros, signs, spaces, exponents, past
// uint64) are still different strings, and each keeps its own text.
TEST(SharedStrings, DecimalTextsAreFoundByValueYetStayTexts) {
  SharedStrings strings;
  const std::vector<std::string> texts = {
      "0", "00", "007", "7", "-7", "+7", "7.0", "1e3", "1000", " 7", "7 ", "x7",
      "9999999999999999999", "18446744073709551615", "18446744073709551616", "99999999999999999999",
      "01", "1", "10", "305478"};
  std::vector<uint32_t> ids;
  for (const std::string& t : texts) ids.push_back(strings.Intern(t));
  EXPECT_EQ(std::set<uint32_t>(ids.begin(), ids.end()).size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string_view stored;
    EXPECT_EQ(strings.Intern(std::string(texts[i]), &stored), ids[i]) << texts[i];
    EXPECT_EQ(stored, texts[i]);
    EXPECT_EQ(strings.Text(ids[i]), texts[i]);
    EXPECT_NE(ids[i], 0u);
  }
  EXPECT_EQ(strings.Intern(""), 0u);
}

// Texts live in 64 KiB blocks: one longer than a block gets its own, and
// views handed out earlier stay valid as blocks are added. bytes() counts
// at least the texts.
TEST(SharedStrings, LongTextsAndViewsStayValidAndAreCounted) {
  SharedStrings strings;
  std::vector<std::string_view> views;
  std::vector<std::string> texts;
  size_t text_bytes = 0;
  for (int i = 0; i < 3000; ++i) {
    texts.push_back(i % 1000 == 7 ? std::string(100000 + i, 'x') : absl::StrCat("flow id ", i * 7919));
    std::string_view v;
    strings.Intern(texts.back(), &v);
    views.push_back(v);
    text_bytes += texts.back().size();
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(views[i], texts[i]) << i;
    std::string_view again;
    const uint32_t id = strings.Intern(texts[i], &again);
    EXPECT_EQ(again.data(), views[i].data()) << i;  // the one stored copy
    EXPECT_EQ(strings.Text(id), texts[i]);
  }
  EXPECT_GE(strings.bytes(), static_cast<int64_t>(text_bytes));
  const int64_t before = strings.bytes();
  strings.Charge(1000);
  strings.Charge(-1000);
  EXPECT_EQ(strings.bytes(), before);
}

}  // namespace
}  // namespace tracetable
