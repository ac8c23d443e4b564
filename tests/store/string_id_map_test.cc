// StringIdMap (store/string_id_map.h): every text inserted is found with its
// id, whether held in the slot (up to kInlineBytes) or viewed; texts that
// differ only past a prefix, by length, or by a byte inside the slot are
// told apart; an absent text is not found.
#include "store/string_id_map.h"

#include <deque>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracetable {
namespace {

TEST(StringIdMap, FindsWhatWasInsertedAtEveryLength) {
  StringIdMap map;
  std::deque<std::string> texts;  // viewed by the map when long
  texts.push_back("");
  for (size_t n = 1; n <= 2 * StringIdMap::kInlineBytes + 3; ++n) {
    texts.push_back(std::string(n, 'a'));
    texts.push_back(std::string(n - 1, 'a') + "b");  // differs in its last byte
  }
  for (int i = 0; i < 5000; ++i) texts.push_back(absl::StrCat(i % 2 ? "fusion." : "a name well past the inline size ", i));
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_FALSE(map.Find(texts[i]).has_value()) << texts[i];
    map.Insert(texts[i], static_cast<uint32_t>(i) * 7);
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    map.Prefetch(texts[i]);
    std::optional<uint32_t> id = map.Find(std::string(texts[i]));  // a copy: found by content
    ASSERT_TRUE(id.has_value()) << texts[i];
    EXPECT_EQ(*id, static_cast<uint32_t>(i) * 7) << texts[i];
  }
  EXPECT_FALSE(map.Find(std::string(StringIdMap::kInlineBytes, 'c')).has_value());
  EXPECT_FALSE(map.Find(std::string(StringIdMap::kInlineBytes + 1, 'c')).has_value());
  EXPECT_FALSE(map.Find("fusion.0").has_value());  // even ids are the long ones
  EXPECT_GT(map.bytes(), texts.size() * sizeof(uint32_t));
}

}  // namespace
}  // namespace tracetable
