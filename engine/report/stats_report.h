#pragma once
// `mavg report compare|bootstrap`'s input and output: arms as the command line gives them, and
// engine/report/stats.h's results as JSON (what the reproduction page lays out; keys in
// README.md's report section) or as text for a terminal. A number that could not be computed
// is null in JSON and "n/a" in text.

#include <nlohmann/json.hpp>
#include <string>

#include "engine/report/stats.h"

namespace mavg {

// "7.0,6.9,x": replicate values separated by commas, `x` or `collapsed` for a collapsed run.
// Throws naming `flag` on an empty list or item, or an item that is not a finite number.
Arm ParseArm(const std::string& text, const std::string& flag);

// A number, or null where it could not be computed (NaN, infinite).
nlohmann::json NumberOrNull(double x);
// An arm's summary: n, collapsed, mean, sd.
nlohmann::json ArmJson(const ArmSummary& s);

nlohmann::json ComparisonJson(const Comparison& c, const CompareOptions& options);
nlohmann::json InteractionJson(const Interaction& r, const CompareOptions& options);
nlohmann::json BootstrapJson(const BootstrapResult& r, const BootstrapOptions& options);

std::string ComparisonText(const Comparison& c, const CompareOptions& options);
std::string InteractionText(const Interaction& r, const CompareOptions& options);
std::string BootstrapText(const BootstrapResult& r, const BootstrapOptions& options);

}  // namespace mavg
