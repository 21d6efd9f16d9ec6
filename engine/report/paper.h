#pragma once
// `mavg report paper`: a sweep's numbers beside Su & Chen's (sweeps/paper/reference.yaml).

#include <string>
#include <vector>

#include "engine/report/sweep_data.h"

namespace mavg {

struct PaperOptions {
  std::string reference = "sweeps/paper/reference.yaml";
  std::string metric = "test_error";  // ours; the paper's is WER on Hub5'00 SWB
  std::string axis = "parallel.workers";
  std::vector<std::pair<std::string, std::string>> where;
};

std::string PaperComparison(const std::string& sweep, const std::vector<ReportRun>& runs,
                            const PaperOptions& options);

}  // namespace mavg
