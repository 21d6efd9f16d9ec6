// Run configs: strict YAML (duplicate keys, unknown keys, types, ranges), then the cross-key
// validation and the run id of whatever parsed.
#include "engine/config/schema.h"
#include "tests/fuzz/fuzz_target.h"

MAVG_FUZZ_TARGET(config_yaml) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mavg::fuzz::ExpectCleanFailure([&] {
    mavg::RunConfig config = mavg::ParseConfigYaml(text, "fuzz.yaml");
    mavg::Validate(config, "fuzz.yaml");
    (void)mavg::RunId(config);
    (void)mavg::ToYaml(config);
  });
}
