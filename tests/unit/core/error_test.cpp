// Error messages are always valid UTF-8: bytes quoted from corrupt files become \xNN.
#include "engine/core/error.h"

#include <gtest/gtest.h>

namespace mavg {
namespace {

TEST(ValidUtf8, KeepsWellFormedTextAndEscapesEverythingElse) {
  EXPECT_EQ(ValidUtf8("plain ascii"), "plain ascii");
  EXPECT_EQ(ValidUtf8("caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80");
  EXPECT_EQ(ValidUtf8("a\xFF"
                      "b"),
            "a\\xFFb");
  EXPECT_EQ(ValidUtf8("\xC3"), "\\xC3");                             // truncated
  EXPECT_EQ(ValidUtf8("\xC0\x80"), "\\xC0\\x80");                    // overlong NUL
  EXPECT_EQ(ValidUtf8("\xE0\x80\x80"), "\\xE0\\x80\\x80");           // overlong
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), "\\xED\\xA0\\x80");           // a surrogate
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(ValidUtf8("\xE6\x97"
                      "x"),
            "\\xE6\\x97x");  // cut short by an ASCII byte
  EXPECT_EQ(ValidUtf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(ValidUtf8, ErrorsCarryValidText) {
  try {
    MAVG_FAIL("utterance '{}' not found", std::string("\x9B\xFFu1"));
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "utterance '\\x9B\\xFFu1' not found");
  }
}

}  // namespace
}  // namespace mavg
