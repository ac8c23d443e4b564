// SameText must agree with == for every length and every position of a
// difference: the parse's caches and name maps compare with it, and a wrong
// "same" would hand one name another's id.
#include <string>

#include "gtest/gtest.h"
#include "format/same_text.h"

namespace tracetable {
namespace {

TEST(SameText, AgreesWithEqualityAtEveryLengthAndDifference) {
  for (size_t n = 0; n <= 40; ++n) {
    std::string a(n, 'x');
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<char>('a' + i % 26);
    const std::string same = a;  // other storage, same bytes
    EXPECT_TRUE(SameText(a, same)) << n;
    for (size_t i = 0; i < n; ++i) {
      std::string b = a;
      b[i] ^= 1;
      EXPECT_FALSE(SameText(a, b)) << n << " differing at " << i;
      EXPECT_FALSE(SameText(b, a)) << n << " differing at " << i;
    }
    EXPECT_FALSE(SameText(a, a + "y")) << n;
    EXPECT_FALSE(SameText(a + "y", a)) << n;
    if (n > 0) {
      EXPECT_FALSE(SameText(a, std::string_view(a).substr(1))) << n;
    }
  }
}

}  // namespace
}  // namespace tracetable
