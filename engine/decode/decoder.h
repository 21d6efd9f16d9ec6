#pragma once
// Viterbi beam search of a hybrid DNN-HMM over a word loop built from a Lang (lang.h).
//
// The search graph (Kaldi's L with optional silence composed with a uniform word loop G):
//
//   start --(sil_prob)--> [sil] --> LOOP          LOOP is the word boundary; it is final.
//   start --(1 - sil_prob)--------> LOOP
//   LOOP --(1/num_words, minus word_penalty)--> [pronunciation of a word]
//   [word] --(sil_prob)--> [sil] --> LOOP
//   [word] --(1 - sil_prob)--------> LOOP
//
// [x] is a chain of 3-state left-to-right phone HMMs (a word's pronunciation: its phones' states
// in order). Every state has a self-loop (log p_self of its pdf) and a forward transition
// (log(1 - p_self)); the forward transition of a chain's last state leaves the chain. All of a
// word's pronunciations have probability 1 (Kaldi's lexicon without pronunciation
// probabilities). LOOP is the only final state: a path that ends there (at the end of a word or of
// a silence) is complete; an utterance of silence only (or of no frames) decodes to no words.
//
// When no token is in LOOP after the last frame (the beam pruned every path that could finish),
// the result is the best partial path, as Kaldi's decoders give it with --allow-partial=true
// (what every recipe passes): the best token of the last frame, its words so far, and the word
// whose pronunciation it is in (Kaldi's lexicon FST puts a word's label on its first phone).
// DecodeOptions::allow_partial false gives no words instead (every reference word a deletion).
// docs/algorithms.md §7 compares the search with Kaldi's.
//
// Score of a path = sum over frames of acoustic_scale * loglike[t][pdf] + the log transition
// probabilities + the log grammar weights above (natural logarithms), and -word_penalty per
// word. Beam pruning: after each frame, tokens more than `beam` below the best token of that
// frame are dropped (same units as the score, as Kaldi's --beam).

#include <string>
#include <vector>

#include "engine/decode/lang.h"

namespace mavg {

struct DecodeOptions {
  double acoustic_scale = 0.1;
  double word_penalty = 0.0;  // subtracted from the log score at each word entry
  double beam = 13.0;         // > 0; infinity disables pruning
  double sil_prob = 0.5;      // probability of a silence at each word boundary, in [0, 1]
  bool allow_partial = true;  // no token final at the end: the best partial path (Kaldi's
                              // --allow-partial=true); false: no words
};

struct DecodeResult {
  bool found = false;         // false: no path survived, or none reached LOOP and partial paths are
                              // not allowed (words empty, score -inf)
  bool partial = false;       // found, but no token reached LOOP: the best partial path
  std::vector<int> word_ids;  // [num_words] ids into Lang::words
  std::vector<std::string> words;    // [num_words]
  std::vector<int> prons;            // [num_words] index into Lang::prons
  std::vector<int> word_end_frames;  // [num_words] frame after each word's last frame
  double score = 0.0;                // log score of the best path (see the header comment)
};

class Decoder {
 public:
  explicit Decoder(const Lang& lang);

  // Decodes one utterance: loglikes is [frames x num_pdfs] row-major (log p(x|pdf) up to a
  // constant; -inf forbids a pdf at a frame; NaN or +inf throws). num_pdfs must equal the
  // Lang's. Thread-safe: all scratch memory is local to the call.
  DecodeResult Decode(const float* loglikes, int frames, int num_pdfs,
                      const DecodeOptions& options) const;

  int NumStates() const { return static_cast<int>(pdf_.size()); }
  const Lang& GetLang() const { return lang_; }

 private:
  Lang lang_;
  // Emitting states, chain by chain: chain 0 is silence, chain c >= 1 is lang_.prons[c - 1].
  std::vector<int> pdf_;             // [NumStates()] pdf of each state
  std::vector<double> log_self_;     // [NumStates()] log p_self
  std::vector<double> log_forward_;  // [NumStates()] log(1 - p_self)
  std::vector<int> chain_begin_;     // [num_chains + 1] first state of each chain
};

// Posteriors are floored at this before their log (LogLikelihoods, and mavg forward's
// log posteriors, which then differ from the log-likelihoods by exactly the log priors).
inline constexpr double kPosteriorFloor = 1e-20;

// Scaled log-likelihoods for decoding from network posteriors: [frames x num_pdfs] row-major,
//   loglike[t][j] = log(max(posterior[t][j], 1e-20)) - log(prior[j]),  prior = counts / total.
// A pdf with no training frames (prior < 1e-10) gets log prior = log(sqrt(FLT_MAX)) ~ 44.4, as
// Kaldi nnet1's PdfPrior does: it stays finite but is made unlikely rather than boosted.
// label_counts must have num_pdfs entries with a positive total.
std::vector<float> LogLikelihoods(const float* posteriors, int frames, int num_pdfs,
                                  const std::vector<double>& label_counts);

}  // namespace mavg
