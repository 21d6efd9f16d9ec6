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
#include "engine/core/error.h"
#include "engine/core/timer.h"
#include "engine/data/dataset.h"
#include "engine/data/kaldi_io.h"
#include "engine/decode/decode_dir.h"
#include "engine/nn/model.h"

namespace mavg::cli {
namespace {

// A wspecifier's archive (and scp), text or binary: PATH, ark:PATH, ark,t:PATH,
// ark,scp:ARK,SCP (ark,scp,t: text is not offered with an scp).
struct Wspecifier {
  std::string ark, scp;
  bool text = false;
};

Wspecifier ParseWspecifier(const std::string& w) {
  Wspecifier out;
  const size_t colon = w.find(':');
  if (colon == std::string::npos) {
    out.ark = w;
  } else {
    const std::string kind = w.substr(0, colon), rest = w.substr(colon + 1);
    if (kind == "ark" || kind == "ark,b") {
      out.ark = rest;
    } else if (kind == "ark,t") {
      out.ark = rest, out.text = true;
    } else if (kind == "ark,scp" || kind == "ark,scp,b") {
      const size_t comma = rest.find(',');
      MAVG_CHECK(comma != std::string::npos, "--out {}: ark,scp: needs ARK,SCP", w);
      out.ark = rest.substr(0, comma), out.scp = rest.substr(comma + 1);
    } else {
      MAVG_FAIL(
          "--out {}: not a wspecifier mavg writes (PATH, ark:PATH, ark,t:PATH, "
          "ark,scp:ARK,SCP)",
          w);
    }
  }
  MAVG_CHECK(!out.ark.empty() && out.ark != "-",
             "--out {}: give a file (writing to a pipe is not supported)", w);
  return out;
}

}  // namespace

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
    load.ignore_labels = true;  // every utterance of feats.scp, aligned or not
    const Dataset data = LoadDataDir(a->data, load);
    MAVG_CHECK(data.NumUtts() > 0, "{}: no utterances", a->data);
    const std::vector<kaldi::HostMatrix> out = ModelOutputs(model, data, kinds.at(a->output));
    // Written to a temporary name and renamed into place: a failure leaves no partial archive.
    if (w.text) {
      kaldi::TextMatrixArchiveWriter writer(w.ark);
      for (size_t u = 0; u < out.size(); ++u) writer.Write(data.utt_ids[u], out[u]);
      writer.Close();
    } else {
      kaldi::MatrixArchiveWriter writer(w.ark, w.scp);
      for (size_t u = 0; u < out.size(); ++u) writer.Write(data.utt_ids[u], out[u]);
      writer.Close();
    }
    int64_t frames = 0;
    for (const auto& m : out) frames += m.rows;
    std::cout << fmt::format("{}: {} utterances, {} frames x {} {} in {:.2f}s\n", w.ark, out.size(),
                             frames, model.network->Spec().output_dim, a->output, timer.Seconds());
  });
}

}  // namespace mavg::cli
