// Compiled by the test enum_text.incomplete_table (tests/CMakeLists.txt), which expects the
// compiler to refuse it: Color has three values and its table two rows. Built with
// -DMAVG_COMPLETE_TABLE (the control, enum_text.complete_table) it must compile.
#include "engine/core/enum_text.h"

namespace compile_test {

enum class Color { kRed, kGreen, kBlue };
#ifdef MAVG_COMPLETE_TABLE
inline constexpr mavg::EnumText<Color> kColorTexts[] = {
    {Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kBlue, "blue"}};
#else
inline constexpr mavg::EnumText<Color> kColorTexts[] = {{Color::kRed, "red"},
                                                        {Color::kGreen, "green"}};
#endif
MAVG_ENUM_TEXTS(Color, kColorTexts)

}  // namespace compile_test

int main() { return static_cast<int>(mavg::ToString(compile_test::Color::kBlue).size()); }
