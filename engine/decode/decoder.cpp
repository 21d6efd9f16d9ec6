#include "engine/decode/decoder.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <utility>

#include "engine/core/error.h"

namespace mavg {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kPriorFloor = 1e-10;

double SafeLog(double p) { return p > 0.0 ? std::log(p) : kNegInf; }

// One word on the best path to a token, linked to the words before it (-1: none).
struct WordLink {
  int prev = -1;
  int pron = 0;       // index into Lang::prons
  int end_frame = 0;  // frame after the word's last frame
};

void CheckOptions(const DecodeOptions& o) {
  MAVG_CHECK(std::isfinite(o.acoustic_scale) && o.acoustic_scale >= 0.0,
             "decode: acoustic scale {} must be finite and >= 0", o.acoustic_scale);
  MAVG_CHECK(std::isfinite(o.word_penalty), "decode: word penalty {} must be finite",
             o.word_penalty);
  MAVG_CHECK(o.beam > 0.0, "decode: beam {} must be > 0", o.beam);
  MAVG_CHECK(o.sil_prob >= 0.0 && o.sil_prob <= 1.0, "decode: silence probability {} not in [0, 1]",
             o.sil_prob);
}

}  // namespace

Decoder::Decoder(const Lang& lang) : lang_(lang) {
  ValidateLang(lang_, "decoder");
  chain_begin_.push_back(0);
  auto add_chain = [&](const std::vector<int>& phones) {
    for (int phone : phones) {
      for (int s = 0; s < kStatesPerPhone; ++s) {
        const int pdf = lang_.pdfs[phone][s];
        pdf_.push_back(pdf);
        log_self_.push_back(std::log(lang_.self_loop[pdf]));
        log_forward_.push_back(std::log1p(-lang_.self_loop[pdf]));
      }
    }
    chain_begin_.push_back(static_cast<int>(pdf_.size()));
  };
  add_chain({0});
  for (const Pronunciation& pron : lang_.prons) add_chain(pron.phones);
}

DecodeResult Decoder::Decode(const float* loglikes, int frames, int num_pdfs,
                             const DecodeOptions& options) const {
  CheckOptions(options);
  MAVG_CHECK(num_pdfs == lang_.NumPdfs(),
             "decode: the log-likelihoods have {} pdfs, but the lang has {}", num_pdfs,
             lang_.NumPdfs());
  MAVG_CHECK(frames >= 0, "decode: {} frames", frames);
  const int num_states = NumStates();
  const int num_chains = static_cast<int>(chain_begin_.size()) - 1;
  const double log_sil = SafeLog(options.sil_prob);
  const double log_no_sil = SafeLog(1.0 - options.sil_prob);
  const double word_entry_cost = -std::log(lang_.NumWords()) - options.word_penalty;
  const int sil_last = chain_begin_[1] - 1;

  // Tokens of the previous and the current frame: score and word link per emitting state.
  std::vector<double> prev(num_states, kNegInf), cur(num_states, kNegInf);
  std::vector<int> prev_link(num_states, -1), cur_link(num_states, -1);
  std::vector<double> acoustic(num_pdfs);
  std::vector<WordLink> links;
  // Non-emitting tokens between frames: the word boundary LOOP and the entry of silence.
  double loop = log_no_sil, sil_entry = log_sil;
  int loop_link = -1, sil_entry_link = -1;

  for (int t = 0; t < frames; ++t) {
    const float* row = loglikes + static_cast<int64_t>(t) * num_pdfs;
    for (int j = 0; j < num_pdfs; ++j) {
      const float l = row[j];
      MAVG_CHECK(!std::isnan(l) && l != std::numeric_limits<float>::infinity(),
                 "decode: log-likelihood of frame {} pdf {} is {}", t, j, l);
      acoustic[j] =
          l == -std::numeric_limits<float>::infinity() ? kNegInf : options.acoustic_scale * l;
    }
    const double word_entry = loop + word_entry_cost;
    double best = kNegInf;
    for (int c = 0; c < num_chains; ++c) {
      const int begin = chain_begin_[c], end = chain_begin_[c + 1];
      double move = c == 0 ? sil_entry : word_entry;
      int move_link = c == 0 ? sil_entry_link : loop_link;
      for (int s = begin; s < end; ++s) {
        const double stay = prev[s] + log_self_[s];
        double score = stay;  // ties keep the self-loop: any fixed rule is fine
        int link = prev_link[s];
        if (move > stay) {
          score = move;
          link = move_link;
        }
        score += acoustic[pdf_[s]];
        cur[s] = score;
        cur_link[s] = link;
        best = std::max(best, score);
        move = prev[s] + log_forward_[s];  // into s + 1
        move_link = prev_link[s];
      }
    }
    if (best == kNegInf) {  // every path is impossible already
      DecodeResult none;
      none.score = kNegInf;
      return none;
    }

    const double cutoff = best - options.beam;
    for (int s = 0; s < num_states; ++s) {
      if (cur[s] < cutoff) cur[s] = kNegInf;
    }
    // Leaving chains: the best word end (first chain on ties) gets a word link.
    double word_exit = kNegInf;
    int word_exit_chain = -1;
    for (int c = 1; c < num_chains; ++c) {
      const int last = chain_begin_[c + 1] - 1;
      const double exit = cur[last] + log_forward_[last];
      if (exit > word_exit) {
        word_exit = exit;
        word_exit_chain = c;
      }
    }
    int word_link = -1;
    if (word_exit_chain >= 0) {
      const int last = chain_begin_[word_exit_chain + 1] - 1;
      links.push_back(WordLink{cur_link[last], word_exit_chain - 1, t + 1});
      word_link = static_cast<int>(links.size()) - 1;
    }
    const double sil_exit = cur[sil_last] + log_forward_[sil_last];
    loop = word_exit + log_no_sil;
    loop_link = word_link;
    if (sil_exit > loop) {
      loop = sil_exit;
      loop_link = cur_link[sil_last];
    }
    sil_entry = word_exit + log_sil;
    sil_entry_link = word_link;
    std::swap(prev, cur);
    std::swap(prev_link, cur_link);
  }

  DecodeResult result;
  int last_link = loop_link;
  int open_pron = -1;  // a partial path that ends inside a word: that word's pronunciation
  if (loop > kNegInf) {
    result.score = loop;
  } else if (options.allow_partial) {
    // Every token of the last frame counts as final with cost 0 (Kaldi's GetRawLattice when
    // no final state is active); the best one, the first state on ties.
    int best_state = -1;
    for (int s = 0; s < num_states; ++s) {
      if (prev[s] > kNegInf && (best_state < 0 || prev[s] > prev[best_state])) best_state = s;
    }
    if (best_state < 0) {
      result.score = kNegInf;
      return result;
    }
    result.score = prev[best_state];
    result.partial = true;
    last_link = prev_link[best_state];
    const int chain =
        static_cast<int>(std::upper_bound(chain_begin_.begin(), chain_begin_.end(), best_state) -
                         chain_begin_.begin() - 1);
    if (chain >= 1) open_pron = chain - 1;
  } else {
    result.score = kNegInf;
    return result;
  }
  result.found = true;
  auto add_word = [&](int pron, int end_frame) {
    const int word = lang_.prons[pron].word;
    result.word_ids.push_back(word);
    result.words.push_back(lang_.words[word]);
    result.prons.push_back(pron);
    result.word_end_frames.push_back(end_frame);
  };
  if (open_pron >= 0) add_word(open_pron, frames);
  for (int l = last_link; l >= 0; l = links[l].prev) add_word(links[l].pron, links[l].end_frame);
  std::reverse(result.word_ids.begin(), result.word_ids.end());
  std::reverse(result.words.begin(), result.words.end());
  std::reverse(result.prons.begin(), result.prons.end());
  std::reverse(result.word_end_frames.begin(), result.word_end_frames.end());
  return result;
}

std::vector<float> LogLikelihoods(const float* posteriors, int frames, int num_pdfs,
                                  const std::vector<double>& label_counts) {
  MAVG_CHECK(static_cast<int>(label_counts.size()) == num_pdfs,
             "log-likelihoods: {} label counts (priors) for {} pdfs", label_counts.size(),
             num_pdfs);
  double total = 0.0;
  for (double c : label_counts) {
    MAVG_CHECK(std::isfinite(c) && c >= 0.0, "log-likelihoods: label count {} is not >= 0", c);
    total += c;
  }
  MAVG_CHECK(total > 0.0, "log-likelihoods: the label counts (priors) are all zero");
  std::vector<double> log_prior(num_pdfs);
  for (int j = 0; j < num_pdfs; ++j) {
    const double prior = label_counts[j] / total;
    log_prior[j] =
        prior < kPriorFloor ? std::log(std::sqrt(static_cast<double>(FLT_MAX))) : std::log(prior);
  }
  std::vector<float> out(static_cast<size_t>(frames) * num_pdfs);
  for (int64_t t = 0; t < frames; ++t) {
    const float* post = posteriors + t * num_pdfs;
    float* row = out.data() + t * num_pdfs;
    for (int j = 0; j < num_pdfs; ++j) {
      const double p = std::max(static_cast<double>(post[j]), kPosteriorFloor);
      row[j] = static_cast<float>(std::log(p) - log_prior[j]);
    }
  }
  return out;
}

}  // namespace mavg
