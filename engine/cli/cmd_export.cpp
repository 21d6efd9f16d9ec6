// mavg export kaldi-nnet1 MODEL [--out FILE] [--feature-transform FILE]
// mavg export kaldi-dir MODEL --out DIR
#include <fmt/core.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/backend/backend.h"
#include "engine/cli/commands.h"
#include "engine/core/error.h"
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

  auto dir_args = std::make_shared<Args>();
  CLI::App* d =
      cmd->add_subcommand("kaldi-dir",
                          "A Kaldi nnet1 experiment dir: final.nnet, final.feature_transform, "
                          "ali_train_pdf.counts and a README with the steps/nnet/decode.sh call");
  d->add_option("model", dir_args->model, "mavg model file (model.bin)")->required();
  d->add_option("--out", dir_args->out, "Directory to write (created; files are replaced)")
      ->required();
  d->callback([dir_args] {
    auto backend = CreateBackend(BackendOptions{});
    Model model = LoadModel(dir_args->model, *backend);
    const int outputs = model.network->Spec().output_dim;
    MAVG_CHECK(static_cast<int>(model.label_counts.size()) == outputs,
               "{}: {} label counts for {} outputs: without the training counts Kaldi cannot "
               "turn posteriors into likelihoods",
               dir_args->model, model.label_counts.size(), outputs);
    std::ostringstream nnet, transform, counts;
    WriteKaldiNnet1(model, /*include_transform=*/false, nnet);
    WriteKaldiFeatureTransform(model.transform, transform);
    WriteKaldiCounts(model.label_counts, counts);
    const std::string& dir = dir_args->out;
    MakeDirs(dir);
    // The per-dir pipeline the way steps/nnet/train.sh records it for decode.sh: cmvn_opts
    // (apply-cmvn with the test dir's cmvn.scp and utt2spk) and delta_opts (add-deltas).
    const FeaturePipeline& pipe = model.transform.pipeline;
    std::string files = "final.nnet, final.feature_transform, ali_train_pdf.counts";
    // Stale options go first, and the options are written before the network: a failure part
    // way never leaves a new network beside an old pipeline.
    for (const char* f : {"/cmvn_opts", "/delta_opts"}) std::remove((dir + f).c_str());
    std::string pipeline_text;
    if (pipe.speaker_cmvn) {
      WriteFileAtomic(dir + "/cmvn_opts", fmt::format("--norm-means=true --norm-vars={}\n",
                                                      pipe.norm_vars ? "true" : "false"));
      files += ", cmvn_opts";
      pipeline_text += fmt::format(
          "  cmvn_opts                per-speaker CMVN (apply-cmvn --norm-vars={}) with the "
          "decoded\n                           dir's cmvn.scp and utt2spk, as in training\n",
          pipe.norm_vars ? "true" : "false");
    }
    if (pipe.delta_order > 0) {
      WriteFileAtomic(dir + "/delta_opts", fmt::format("--delta-order={}\n", pipe.delta_order));
      files += ", delta_opts";
      pipeline_text +=
          fmt::format("  delta_opts               add-deltas --delta-order={}\n", pipe.delta_order);
    }
    WriteFileAtomic(dir + "/final.nnet", nnet.str());
    WriteFileAtomic(dir + "/final.feature_transform", transform.str());
    WriteFileAtomic(dir + "/ali_train_pdf.counts", counts.str());
    const std::string applies =
        pipe.IsIdentity()
            ? "it applies no per-speaker CMVN (there is no cmvn_opts file here) and no\n"
              "deltas, as mavg trained on the features as they are in the data dir."
            : "it applies cmvn_opts and delta_opts to the test features first, as mavg did\n"
              "in training (the test dir needs its own cmvn.scp: steps/compute_cmvn_stats.sh).";
    WriteFileAtomic(
        dir + "/README",
        fmt::format(
            "Exported by mavg from {model}: a Kaldi nnet1 DNN with {outputs} outputs.\n"
            "  final.nnet               the network (affine layers, activations, softmax)\n"
            "  final.feature_transform  splicing +-{context} frames{cmvn}\n"
            "  ali_train_pdf.counts     training frames per pdf (the priors; as analyze-counts)\n"
            "{pipeline}"
            "\n"
            "The pdfs must be those of the alignments mavg trained on. To decode with Kaldi, copy\n"
            "the transition model of those alignments here and run steps/nnet/decode.sh from your\n"
            "recipe's directory (s5/), e.g. for Switchboard:\n"
            "  cp exp/tri4_ali_nodup/final.mdl {dir}/\n"
            "  steps/nnet/decode.sh --nj 30 --acwt 0.08333 --srcdir {dir} \\\n"
            "    exp/tri4/graph_sw1_tg data/eval2000 {dir}/decode_eval2000_sw1_tg\n"
            "decode.sh reads final.nnet, final.feature_transform and ali_train_pdf.counts from\n"
            "--srcdir; {applies} Then\n"
            "  mavg run metric RUN_DIR --set wer_eval2000=<the %WER of the best wer_* file>\n"
            "records the result with the run.\n",
            fmt::arg("model", dir_args->model), fmt::arg("outputs", outputs),
            fmt::arg("context", model.transform.context),
            fmt::arg("cmvn", model.transform.HasCmvn()
                                 ? ", then the training set's global mean/variance (AddShift, "
                                   "Rescale)"
                                 : ""),
            fmt::arg("dir", dir), fmt::arg("pipeline", pipeline_text),
            fmt::arg("applies", applies)));
    std::cout << fmt::format("{}: {}, README\n", dir, files);
  });
}

}  // namespace mavg::cli
