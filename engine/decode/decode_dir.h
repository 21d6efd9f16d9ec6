#pragma once
// Decoding a data dir: log-likelihoods from a model (its feature transform, then the network,
// then the priors), Viterbi decoding of every utterance over `threads` std::threads, and
// scoring against the data dir's `text`.

#include <string>
#include <vector>

#include "engine/data/dataset.h"
#include "engine/data/kaldi_io.h"
#include "engine/decode/decoder.h"
#include "engine/decode/score.h"
#include "engine/nn/model.h"

namespace mavg {

struct DecodeSetOptions {
  DecodeOptions decode;
  int threads = 1;  // decoding threads (>= 1)
};

struct DecodeSetResult {
  WerStats stats;
  std::vector<std::string> utt_ids;     // [num_utts] in the order given
  std::vector<std::string> hyps;        // [num_utts] words joined by single blanks
  std::vector<std::string> alignments;  // [num_utts] FormatAlignment blocks
  int64_t no_path = 0;  // utterances without a surviving path, or without a complete one when
                        // partial paths are not allowed (empty hyp: all deletions)
  int64_t partial = 0;  // utterances whose best path did not reach a final state (their
                        // hypothesis is the best partial path: DecodeOptions::allow_partial)
  int64_t frames = 0;
  double decode_seconds = 0.0;      // wall clock of the decoding (all threads), scoring included
  double decode_cpu_seconds = 0.0;  // sum over utterances of Decoder::Decode time
  double audio_seconds = 0.0;       // frames / 100
};

// What a forward pass writes per frame and output (as Kaldi's nnet-forward options):
//   kLogLikelihoods  log(max(posterior, 1e-20)) - log(prior), priors from the training label
//                    counts with nnet1's flooring (LogLikelihoods; --class-frame-counts)
//   kLogPosteriors   log(max(posterior, 1e-20))                       (--apply-log)
//   kPosteriors      the softmax output                               (the default)
//   kLogits          the output layer before the softmax              (--no-softmax)
enum class ForwardOutput { kLogLikelihoods, kLogPosteriors, kPosteriors, kLogits };

// `kind` [frames x pdfs] for every utterance of `data` (raw features, as LoadDataDir gives
// them): the model's CMVN shift/scale, splicing +-context, the network in batches of `batch`
// frames; log-likelihoods with the model's label counts.
std::vector<kaldi::HostMatrix> ModelOutputs(Model& model, const Dataset& data, ForwardOutput kind,
                                            int64_t batch = 4096);
inline std::vector<kaldi::HostMatrix> ModelLogLikelihoods(Model& model, const Dataset& data,
                                                          int64_t batch = 4096) {
  return ModelOutputs(model, data, ForwardOutput::kLogLikelihoods, batch);
}

// The same from features already normalised (as training holds them) and the network alone.
std::vector<kaldi::HostMatrix> NetworkOutputs(Network& net, const Dataset& normalised, int context,
                                              ForwardOutput kind,
                                              const std::vector<double>& label_counts,
                                              int64_t batch = 4096);
inline std::vector<kaldi::HostMatrix> NetworkLogLikelihoods(Network& net, const Dataset& normalised,
                                                            int context,
                                                            const std::vector<double>& label_counts,
                                                            int64_t batch = 4096) {
  return NetworkOutputs(net, normalised, context, ForwardOutput::kLogLikelihoods, label_counts,
                        batch);
}

// Decodes utterance i of `utt_ids` from loglikes[i] ([frames x lang pdfs]) and scores it against
// its transcript in `data_dir`/text. An utterance missing from the text, a duplicate text entry
// or a reference word not in the lexicon throws, naming the utterance; so does a decoding error
// (e.g. a NaN log-likelihood). Text entries that are not decoded are ignored (with a warning).
DecodeSetResult DecodeDataDir(const Decoder& decoder, const std::string& data_dir,
                              const std::vector<std::string>& utt_ids,
                              const std::vector<kaldi::HostMatrix>& loglikes,
                              const DecodeSetOptions& options);

}  // namespace mavg
