// mavg export kaldi-nnet1 MODEL [--out FILE] [--feature-transform FILE]
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/backend/backend.h"
#include "engine/cli/commands.h"
#include "engine/core/files.h"
#include "engine/nn/kaldi_nnet1.h"

namespace mavg::cli {

void AddExportCommand(CLI::App& app) {
  struct Args {
    std::string model, out, transform_out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("export", "Convert a model to other toolkits' formats");
  cmd->require_subcommand(1);
  CLI::App* k = cmd->add_subcommand(
      "kaldi-nnet1", "Kaldi nnet1 text format (nnet-forward / nnet-copy can read it)");
  k->add_option("model", args->model, "mavg model file (model.bin)")->required();
  k->add_option("--out", args->out, "Output file (default: standard output)");
  k->add_option("--feature-transform", args->transform_out,
                "Write the splice + CMVN transform to this file (Kaldi's final.feature_transform) "
                "instead of prepending it to the network");
  k->callback([args] {
    auto backend = CreateBackend(BackendOptions{});
    Model model = LoadModel(args->model, *backend);
    std::ostringstream net_text;
    WriteKaldiNnet1(model, /*include_transform=*/args->transform_out.empty(), net_text);
    if (!args->transform_out.empty()) {
      std::ostringstream t;
      WriteKaldiFeatureTransform(model.transform, t);
      WriteFileAtomic(args->transform_out, t.str());
    }
    if (args->out.empty() || args->out == "-") {
      std::cout << net_text.str();
    } else {
      WriteFileAtomic(args->out, net_text.str());
    }
  });
}

}  // namespace mavg::cli
