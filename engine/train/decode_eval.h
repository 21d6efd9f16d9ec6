#pragma once
// The end of a run on a speech task: decode dev to choose the acoustic scale and the word
// insertion penalty (a small grid, as Kaldi's scoring picks its LM weight), then decode the
// test set with them and report WER / SER.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/config/config.h"
#include "engine/nn/network.h"
#include "engine/records/run_result.h"
#include "engine/train/run_data.h"

namespace mavg {

// The lang dir to decode with: data.lang, else <data.train>/../lang when it exists; "" if none.
std::string ResolveLangDir(const RunConfig& config);

struct DecodeReport {
  RunResult result;        // the decode's fields only (wer, ser, wer_dev, ...), for result.json
  std::string alignments;  // per-utterance sclite-style alignments of the test set
};

// nullopt when there is no lang dir or no test set.
std::optional<DecodeReport> DecodeTestSet(Network& net, const RunData& data,
                                          const RunConfig& config, int threads);

}  // namespace mavg
