// The name rules and the quoting of script words (core/words.h).
#include "engine/core/words.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/error.h"

namespace mavg {
namespace {

std::string ErrorOf(void (*check)(std::string_view, std::string_view), std::string_view name) {
  try {
    check("sweep name", name);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Words, NewNamesFollowTheNameRule) {
  for (const char* ok : {"a", "paper-table1", "x_1.2+3", "_private", "0seed"}) {
    EXPECT_EQ(NameProblem(ok), "") << ok;
  }
  const std::string too_long(kMaxNameLength + 1, 'a');
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "..", ".hidden", "-x", "+x", "a/b", "/abs", "a b", "a\nb",
                                std::string("a\0b", 3), too_long}) {
    EXPECT_NE(NameProblem(bad), "") << Printable(bad);
    EXPECT_NE(ErrorOf(CheckName, bad).find("is not a valid name"), std::string::npos);
  }
  EXPECT_NE(ErrorOf(CheckName, "a\nb").find("'a\\nb'"), std::string::npos)
      << "the name is shown on one line";
}

TEST(Words, ExistingNamesNeedOnlyBeOneSafePathComponent) {
  // Names an earlier build may have stored: taken by retry and the launchers.
  for (const std::string& ok :
       std::vector<std::string>{"a b", "-x", ".hidden", "x#y", std::string(255, 'n'), "é"}) {
    EXPECT_EQ(ErrorOf(CheckExistingName, ok), "") << ok;
  }
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "..", "a/b", "../x", "/abs", "a\tb", "a\x7f",
                                std::string("a\0b", 3), std::string(256, 'n')}) {
    const std::string error = ErrorOf(CheckExistingName, bad);
    EXPECT_NE(error.find("cannot name a directory"), std::string::npos) << Printable(bad);
    EXPECT_EQ(error.find('\n'), std::string::npos) << "one line";
  }
}

TEST(Words, ScriptWords) {
  EXPECT_EQ(ShellWord("it's"), "'it'\\''s'");
  EXPECT_EQ(SbatchWord("a b#c\\d\"e'f"), "a\\ b\\#c\\\\d\\\"e\\'f");
  EXPECT_TRUE(HasControlCharacter(std::string("a\vb")));
  EXPECT_FALSE(HasControlCharacter("a b"));
  EXPECT_THROW(CheckNoControlCharacter("--partition", "a\nb"), Error);
  EXPECT_NO_THROW(CheckNoControlCharacter("--partition", "gpu,cpu"));
}

TEST(Words, SplitTrimmedKeepsEmptyItems) {
  EXPECT_EQ(SplitTrimmed(" a, b\t,,c "), (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(SplitTrimmed(""), (std::vector<std::string>{""}));
  EXPECT_EQ(SplitTrimmed("x=1;y=2", ';'), (std::vector<std::string>{"x=1", "y=2"}));
}

}  // namespace
}  // namespace mavg
