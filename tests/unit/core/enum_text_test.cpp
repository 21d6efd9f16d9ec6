// An enum's text table (core/enum_text.h): text, parsing, the list of texts, fmt and streams;
// and every config choice's table is what the config schema offers.
#include "engine/core/enum_text.h"

#include <gtest/gtest.h>

#include <sstream>

#include "engine/config/averaging_config.h"
#include "engine/config/choices.h"
#include "engine/config/combine_config.h"
#include "engine/config/outer_config.h"

namespace mavg {
namespace enum_text_test {

enum class Color { kRed, kGreen, kBlue };
inline constexpr EnumText<Color> kColorTexts[] = {
    {Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kBlue, "blue"}};
MAVG_ENUM_TEXTS(Color, kColorTexts)

// The compile-time check refuses a table out of enum order, with a gap or a duplicate.
inline constexpr EnumText<Color> kOutOfOrder[] = {{Color::kGreen, "green"}, {Color::kRed, "red"}};
inline constexpr EnumText<Color> kDuplicate[] = {{Color::kRed, "red"}, {Color::kGreen, "red"}};
inline constexpr EnumText<Color> kEmpty[] = {{Color::kRed, ""}};
static_assert(!enum_text_detail::WellFormed(kOutOfOrder));
static_assert(!enum_text_detail::WellFormed(kDuplicate));
static_assert(!enum_text_detail::WellFormed(kEmpty));
static_assert(ToString(Color::kBlue) == "blue");
// ... and one that leaves a value out (kBlue): the enum has more named values than rows. An enum
// with a value past the table's, however far, is refused the same way.
inline constexpr EnumText<Color> kMissingLast[] = {{Color::kRed, "red"}, {Color::kGreen, "green"}};
static_assert(enum_text_detail::WellFormed(kMissingLast));
static_assert(!enum_text_detail::CoversEveryValue(kMissingLast));
static_assert(enum_text_detail::CoversEveryValue(kColorTexts));
enum class Sparse { kA, kB, kFar = 40 };
inline constexpr EnumText<Sparse> kSparse[] = {{Sparse::kA, "a"}, {Sparse::kB, "b"}};
static_assert(!enum_text_detail::CoversEveryValue(kSparse));
static_assert(enum_text_detail::IsNamedValue<Color::kBlue>());
static_assert(!enum_text_detail::IsNamedValue<static_cast<Color>(3)>());
static_assert(ParseEnum<Color>("green") == Color::kGreen);

TEST(EnumText, TextParseNamesAndFormatting) {
  EXPECT_EQ(ToString(Color::kGreen), "green");
  EXPECT_EQ(ParseEnum<Color>("blue"), Color::kBlue);
  EXPECT_EQ(ParseEnum<Color>("Blue"), std::nullopt) << "exact, case-sensitive";
  EXPECT_EQ(ParseEnum<Color>(""), std::nullopt);
  EXPECT_EQ(EnumNames<Color>(), "red, green, blue");
  EXPECT_EQ(EnumNames<Color>(" | "), "red | green | blue");
  std::ostringstream out;
  out << Color::kRed;
  EXPECT_EQ(out.str(), "red");
  EXPECT_EQ(fmt::format("{}", ParallelMode::kMpi), "mpi");
}

// An option taking some of an enum's values names them in its error.
TEST(EnumText, ParseOneOfNamesTheAllowedTexts) {
  EXPECT_EQ(ParseOneOf("blue", {Color::kRed, Color::kBlue}, "--color"), Color::kBlue);
  try {
    ParseOneOf("green", {Color::kRed, Color::kBlue}, "--color");
    ADD_FAILURE() << "accepted a value outside the allowed ones";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--color must be red or blue, not 'green'");
  }
  try {
    ParseOneOf("x", {Color::kRed, Color::kGreen, Color::kBlue}, "--color");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--color must be red, green or blue, not 'x'");
  }
}

// Every value of every config choice has its text and parses back to itself.
template <HasTexts E>
void ExpectRoundTrip(size_t values) {
  EXPECT_EQ(TextsOf(E{}).size(), values);
  for (const EnumText<E>& row : TextsOf(E{})) {
    EXPECT_EQ(ParseEnum<E>(ToString(row.value)), row.value) << row.text;
  }
}

TEST(EnumText, EveryConfigChoiceRoundTrips) {
  ExpectRoundTrip<Cmvn>(3);
  ExpectRoundTrip<Activation>(3);
  ExpectRoundTrip<ModelInit>(2);
  ExpectRoundTrip<InitScheme>(4);
  ExpectRoundTrip<OptimizerType>(3);
  ExpectRoundTrip<MaxChangeMode>(2);
  ExpectRoundTrip<RankCap>(2);
  ExpectRoundTrip<ScheduleType>(3);
  ExpectRoundTrip<ParallelMode>(2);
  ExpectRoundTrip<LrScaling>(2);
  ExpectRoundTrip<AveragingAlgorithm>(2);
  ExpectRoundTrip<OptimizerStatePolicy>(3);
  ExpectRoundTrip<OuterType>(4);
  ExpectRoundTrip<CombinePolicyType>(4);
  ExpectRoundTrip<CommChoice>(2);
  ExpectRoundTrip<Device>(2);
}

}  // namespace enum_text_test
}  // namespace mavg
