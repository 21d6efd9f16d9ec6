// mavg forward MODEL --data DIR --out WSPECIFIER [--output loglikes|logposteriors|posteriors|
//   logits] [--threads N]: the network's outputs for every utterance of a data dir, as a Kaldi
// archive (as nnet-forward writes them for latgen-faster-mapped and friends).
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <map>
#include <thread>

#include "engine/backend/backend.h"
#include "engine/cli/commands.h"
#include "engine/cli/wspecifier.h"
#include "engine/core/error.h"
#include "engine/core/timer.h"
#include "engine/data/dataset.h"
#include "engine/data/kaldi_io.h"
#include "engine/decode/decode_dir.h"
#include "engine/nn/model.h"

namespace mavg::cli {

void AddForwardCommand(CLI::App& app) {
  struct Args {
    std::string model, data, out, output = "loglikes";
    int threads = 0;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "forward", "The network's outputs for a data dir as a Kaldi archive (as nnet-forward)");
  cmd->add_option("model", a->model, "Model file (model.bin)")->required();
  cmd->add_option("--data", a->data, "Data dir: feats.scp or feats.ark")->required();
  cmd->add_option("--out", a->out, "Archive: PATH, ark:PATH, ark,t:PATH or ark,scp:ARK,SCP")
      ->required();
  cmd->add_option("--output", a->output,
                  "loglikes: log posterior - log prior (training label counts, Kaldi's "
                  "flooring), for latgen-faster-mapped; logposteriors (nnet-forward "
                  "--apply-log); posteriors (its default); logits (--no-softmax)")
      ->check(CLI::IsMember({"loglikes", "logposteriors", "posteriors", "logits"}))
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads for the network (0: all cores)")
      ->capture_default_str();
  cmd->callback([a] {
    const std::map<std::string, ForwardOutput> kinds = {
        {"loglikes", ForwardOutput::kLogLikelihoods},
        {"logposteriors", ForwardOutput::kLogPosteriors},
        {"posteriors", ForwardOutput::kPosteriors},
        {"logits", ForwardOutput::kLogits}};
    const Wspecifier w = ParseWspecifier(a->out);
    Timer timer;
    BackendOptions backend_options;
    backend_options.threads =
        a->threads > 0 ? a->threads
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    auto backend = CreateBackend(backend_options);
    Model model = LoadModel(a->model, *backend);
    LoadOptions load;
    load.require_labels = false;
    load.ignore_labels = true;                 // every utterance of feats.scp, aligned or not
    load.pipeline = model.transform.pipeline;  // speaker CMVN and deltas as in training
    const Dataset data = LoadDataDir(a->data, load);
    MAVG_CHECK(data.NumUtts() > 0, "{}: no utterances", a->data);
    const std::vector<kaldi::HostMatrix> out = ModelOutputs(model, data, kinds.at(a->output));
    WriteMatrices(w, data.utt_ids, out);  // atomic: a failure leaves no partial archive
    int64_t frames = 0;
    for (const auto& m : out) frames += m.rows;
    std::cout << fmt::format("{}: {} utterances, {} frames x {} {} in {:.2f}s\n", w.ark, out.size(),
                             frames, model.network->Spec().output_dim, a->output, timer.Seconds());
  });
}

}  // namespace mavg::cli
