// The Viterbi decoder on hand-made log-likelihoods with a known best path, against a brute-force
// search over every state path of a tiny graph, and its speed; LogLikelihoods.
#include "engine/decode/decoder.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <tuple>

#include "engine/core/rng.h"
#include "tests/unit/decode/decode_test_util.h"

namespace mavg {
namespace {

using testing_decode::Contains;
using testing_decode::DigitsLang;
using testing_decode::ErrorOf;
using testing_decode::FavourPdfs;
using testing_decode::OneTwoLang;
using testing_decode::PdfsOf;
using testing_decode::TestLang;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<int> Concat(std::initializer_list<std::vector<int>> parts) {
  std::vector<int> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

DecodeResult DecodeAll(const Decoder& decoder, const std::vector<float>& ll,
                       const DecodeOptions& o) {
  const int num_pdfs = decoder.GetLang().NumPdfs();
  return decoder.Decode(ll.data(), static_cast<int>(ll.size() / num_pdfs), num_pdfs, o);
}

DecodeOptions Scale1() {
  DecodeOptions o;
  o.acoustic_scale = 1.0;
  return o;
}

TEST(Decoder, KnownBestPath) {
  const Lang lang = OneTwoLang();
  const Decoder decoder(lang);
  EXPECT_EQ(decoder.NumStates(), 3 * 6);
  const std::vector<int> pdfs = Concat({PdfsOf(lang, {"w", "ah", "n"}), PdfsOf(lang, {"t", "uw"})});
  const DecodeResult r = DecodeAll(decoder, FavourPdfs(pdfs, lang.NumPdfs()), Scale1());
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.words, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(r.word_ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.prons, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.word_end_frames, (std::vector<int>{18, 30}));
  // No silence at the start (log 0.5), "one" (1/2 word prob, 9 states x (self-loop + forward)),
  // no silence between (0.5), "two" (1/2, 6 x 2), no silence at the end (0.5): 35 x log 0.5.
  EXPECT_NEAR(r.score, 35 * std::log(0.5), 1e-9);
}

TEST(Decoder, SilenceIsOptional) {
  const Lang lang = OneTwoLang();
  const Decoder decoder(lang);
  const std::vector<int> sil = PdfsOf(lang, {"sil"});
  const std::vector<int> one = PdfsOf(lang, {"w", "ah", "n"});
  const std::vector<int> two = PdfsOf(lang, {"t", "uw"});
  const std::vector<std::string> expected = {"one", "two"};
  for (const std::vector<int>& pdfs :
       {Concat({sil, one, sil, two, sil}), Concat({one, two}), Concat({sil, one, two}),
        Concat({one, sil, two}), Concat({one, two, sil})}) {
    const DecodeResult r = DecodeAll(decoder, FavourPdfs(pdfs, lang.NumPdfs()), Scale1());
    ASSERT_TRUE(r.found);
    EXPECT_EQ(r.words, expected) << pdfs.size() << " frames";
  }
  // Silence only: a path with no words; start into silence (log 0.5), 3 forward + 3 self-loops.
  const DecodeResult r = DecodeAll(decoder, FavourPdfs(sil, lang.NumPdfs()), Scale1());
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.words.empty());
  EXPECT_NEAR(r.score, 7 * std::log(0.5), 1e-9);
  // With sil_prob 0 the silence frames must go into words.
  DecodeOptions no_sil = Scale1();
  no_sil.sil_prob = 0.0;
  const DecodeResult w =
      DecodeAll(decoder, FavourPdfs(Concat({sil, one, sil}), lang.NumPdfs()), no_sil);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.words, (std::vector<std::string>{"one"}));
  EXPECT_LT(w.score, -100.0);  // 12 frames at -10
}

TEST(Decoder, WordPenaltyRemovesAnInsertion) {
  const Lang lang = OneTwoLang();
  const Decoder decoder(lang);
  // "one", then 12 frames that favour "two" a little over silence (silence pdfs at -1).
  const std::vector<int> one = PdfsOf(lang, {"w", "ah", "n"});
  const std::vector<int> two = PdfsOf(lang, {"t", "uw"});
  std::vector<float> ll = FavourPdfs(Concat({one, two}), lang.NumPdfs());
  for (size_t t = one.size(); t < one.size() + two.size(); ++t) {
    for (int s = 0; s < 3; ++s) ll[t * lang.NumPdfs() + lang.pdfs[0][s]] = -1.0f;
  }
  DecodeOptions o = Scale1();
  // "one two": 15 x log 0.5 = -10.4 vs "one sil": 13 x log 0.5 - 12 = -21.0 (one's part equal).
  EXPECT_EQ(DecodeAll(decoder, ll, o).words, (std::vector<std::string>{"one", "two"}));
  o.word_penalty = 5.0;
  EXPECT_EQ(DecodeAll(decoder, ll, o).words, (std::vector<std::string>{"one", "two"}));
  o.word_penalty = 20.0;
  const DecodeResult r = DecodeAll(decoder, ll, o);
  EXPECT_EQ(r.words, (std::vector<std::string>{"one"}));
  EXPECT_NEAR(r.score, 33 * std::log(0.5) - 12.0 - 20.0, 1e-9);
}

TEST(Decoder, BeamDoesNotChangeAnEasyResult) {
  const Lang lang = DigitsLang();
  const Decoder decoder(lang);
  std::vector<int> pdfs = PdfsOf(lang, {"sil"}, 3);
  const std::vector<std::vector<std::string>> words = {
      {"s", "eh", "v", "ah", "n"}, {"z", "iy", "r", "ow"}, {"ey", "t"}, {"n", "ay", "n"}};
  for (const auto& phones : words) {
    const std::vector<int> w = PdfsOf(lang, phones, 3);
    pdfs.insert(pdfs.end(), w.begin(), w.end());
  }
  const std::vector<float> ll = FavourPdfs(pdfs, lang.NumPdfs(), -3.0f);
  DecodeOptions wide;
  wide.beam = kInf;
  wide.acoustic_scale = 0.5;
  const DecodeResult full = DecodeAll(decoder, ll, wide);
  ASSERT_TRUE(full.found);
  EXPECT_EQ(full.words, (std::vector<std::string>{"seven", "zero", "eight", "nine"}));
  EXPECT_EQ(full.prons[1], 2);  // the second pronunciation of "zero"
  for (double beam : {13.0, 6.0, 3.0}) {
    DecodeOptions o = wide;
    o.beam = beam;
    const DecodeResult r = DecodeAll(decoder, ll, o);
    ASSERT_TRUE(r.found) << beam;
    EXPECT_EQ(r.words, full.words) << beam;
    EXPECT_EQ(r.word_end_frames, full.word_end_frames) << beam;
    EXPECT_DOUBLE_EQ(r.score, full.score) << beam;
  }
}

TEST(Decoder, NoPathFlag) {
  const Lang lang = OneTwoLang();
  const Decoder decoder(lang);
  const int n = lang.NumPdfs();
  DecodeOptions complete_only;
  complete_only.allow_partial = false;
  // Two frames: shorter than any word (6 states) and than silence (3 states): no complete path.
  const DecodeResult r = DecodeAll(decoder, std::vector<float>(2 * n, 0.0f), complete_only);
  EXPECT_FALSE(r.found);
  EXPECT_FALSE(r.partial);
  EXPECT_TRUE(r.words.empty());
  EXPECT_EQ(r.score, -kInf);
  // No frames: the empty path, unless silence is compulsory.
  DecodeOptions o;
  EXPECT_TRUE(decoder.Decode(nullptr, 0, n, o).found);
  EXPECT_FALSE(decoder.Decode(nullptr, 0, n, o).partial);
  EXPECT_NEAR(decoder.Decode(nullptr, 0, n, o).score, std::log(0.5), 1e-12);
  o.sil_prob = 1.0;
  EXPECT_FALSE(decoder.Decode(nullptr, 0, n, o).found);  // no token at all, partial or not
  // A frame where every pdf is impossible: no token survives it, partial or not.
  std::vector<float> ll = FavourPdfs(PdfsOf(lang, {"t", "uw"}), n);
  for (int j = 0; j < n; ++j) ll[5 * n + j] = -std::numeric_limits<float>::infinity();
  EXPECT_FALSE(DecodeAll(decoder, ll, DecodeOptions{}).found);
  EXPECT_FALSE(DecodeAll(decoder, ll, complete_only).found);
  // Words forbidden (their pdfs impossible) and silence disallowed.
  std::vector<float> only_sil(9 * n, -std::numeric_limits<float>::infinity());
  for (int t = 0; t < 9; ++t) only_sil[t * n + lang.pdfs[0][t / 3]] = 0.0f;
  o.sil_prob = 0.0;
  EXPECT_FALSE(DecodeAll(decoder, only_sil, o).found);
  o.sil_prob = 0.5;
  EXPECT_TRUE(DecodeAll(decoder, only_sil, o).found);
  // Silence may not follow silence: in 6 frames of sil states 0,1,2,0,1,2 every token dies at
  // frame 3, so there is no partial path either.
  std::vector<float> sil_sil(6 * n, -std::numeric_limits<float>::infinity());
  for (int t = 0; t < 6; ++t) sil_sil[t * n + lang.pdfs[0][t % 3]] = 0.0f;
  complete_only.sil_prob = 0.5;
  EXPECT_FALSE(DecodeAll(decoder, sil_sil, complete_only).found);
  EXPECT_FALSE(DecodeAll(decoder, sil_sil, o).found);
}

// Kaldi's decoders with --allow-partial=true (every recipe): when no token is final after the
// last frame, the best token of that frame counts as final with cost 0; its path's words include
// the word it is inside (the lexicon puts a word's label on its first phone).
TEST(Decoder, PartialPathWhenTheLastFramesCannotReachAFinalState) {
  const Lang lang = OneTwoLang();
  const Decoder decoder(lang);
  const int n = lang.NumPdfs();
  const std::vector<int> one = PdfsOf(lang, {"w", "ah", "n"});
  // "one", then the first phone of "two" only (6 frames of 't'): the utterance is cut off inside
  // "two". Every frame's pdf other than the favoured one is impossible, so no path can end in a
  // final state: the last frames can only be in t's states.
  std::vector<float> ll =
      FavourPdfs(Concat({one, PdfsOf(lang, {"t"})}), n, -std::numeric_limits<float>::infinity());
  DecodeOptions o = Scale1();
  o.allow_partial = false;
  const DecodeResult none = DecodeAll(decoder, ll, o);
  EXPECT_FALSE(none.found);
  EXPECT_TRUE(none.words.empty());
  o.allow_partial = true;
  const DecodeResult r = DecodeAll(decoder, ll, o);
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.partial);
  EXPECT_EQ(r.words, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(r.prons, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.word_end_frames, (std::vector<int>{18, 24}));  // the open word ends with the input
  // No silence at the start (0.5), "one" (1/2 word prob, 9 states x 2), no silence (0.5), "two"
  // (1/2), t's states: 2 frames each, 5 transitions inside t: 1 + 1 + 18 + 1 + 1 + 5 = 27 x
  // log 0.5, no final weight.
  EXPECT_NEAR(r.score, 27 * std::log(0.5), 1e-9);

  // Cut off inside a silence after "one": the words so far, no open word.
  ll = FavourPdfs(Concat({one, std::vector<int>{lang.pdfs[0][0], lang.pdfs[0][0]}}), n,
                  -std::numeric_limits<float>::infinity());
  const DecodeResult s = DecodeAll(decoder, ll, o);
  ASSERT_TRUE(s.found);
  EXPECT_TRUE(s.partial);
  EXPECT_EQ(s.words, (std::vector<std::string>{"one"}));
  EXPECT_EQ(s.word_end_frames, (std::vector<int>{18}));

  // A complete path, however much worse, wins over a better partial one (Kaldi takes final
  // tokens whenever one is active): with no beam, the 't' frames can end the utterance inside a
  // whole "two" (or a silence) at -10 a frame off its pdf; the default beam prunes those paths,
  // and the partial one is output.
  ll = FavourPdfs(Concat({one, PdfsOf(lang, {"t"})}), n, -10.0f);
  o.beam = kInf;
  const DecodeResult c = DecodeAll(decoder, ll, o);
  ASSERT_TRUE(c.found);
  EXPECT_FALSE(c.partial);
  EXPECT_EQ(c.words[0], "one");
  EXPECT_LT(c.score, 27 * std::log(0.5) - 20.0);
  o.beam = 13.0;
  const DecodeResult p = DecodeAll(decoder, ll, o);
  EXPECT_TRUE(p.partial);
  EXPECT_EQ(p.words, (std::vector<std::string>{"one", "two"}));
}

TEST(Decoder, RejectsBadInput) {
  const Lang lang = OneTwoLang();
  const Decoder decoder(lang);
  const int n = lang.NumPdfs();
  std::vector<float> ll(4 * n, -1.0f);
  ll[2 * n + 3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(Contains(ErrorOf([&] { DecodeAll(decoder, ll, DecodeOptions{}); }),
                       "log-likelihood of frame 2 pdf 3 is nan"));
  ll[2 * n + 3] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(Contains(ErrorOf([&] { DecodeAll(decoder, ll, DecodeOptions{}); }), "is inf"));
  EXPECT_TRUE(Contains(ErrorOf([&] { decoder.Decode(ll.data(), 2, n + 1, DecodeOptions{}); }),
                       "have 19 pdfs, but the lang has 18"));
  DecodeOptions o;
  o.sil_prob = 1.5;
  EXPECT_TRUE(
      Contains(ErrorOf([&] { decoder.Decode(ll.data(), 1, n, o); }), "silence probability"));
  o = DecodeOptions{};
  o.beam = 0.0;
  EXPECT_TRUE(Contains(ErrorOf([&] { decoder.Decode(ll.data(), 1, n, o); }), "beam"));
}

// ---- Brute force -----------------------------------------------------------------------------

// The decoder's graph written out as explicit arcs between emitting states (see decoder.h).
struct ExplicitGraph {
  std::vector<int> pdf;                                   // [states]
  std::vector<std::vector<std::pair<int, double>>> arcs;  // [states] (to, log weight)
  std::vector<double> start, final;                       // [states] log weights (-inf: none)
  std::vector<int> entry_word;                            // [states] word entered here, or -1
};

ExplicitGraph BuildGraph(const Lang& lang, const DecodeOptions& o) {
  auto log = [](double p) { return p > 0 ? std::log(p) : -kInf; };
  const double log_sil = log(o.sil_prob), log_no_sil = log(1 - o.sil_prob);
  const double entry = -std::log(lang.NumWords()) - o.word_penalty;
  ExplicitGraph g;
  std::vector<std::pair<int, int>> chains;  // [first, last] state
  std::vector<int> chain_word;              // -1: silence
  auto add = [&](const std::vector<int>& phones, int word) {
    const int first = static_cast<int>(g.pdf.size());
    for (int p : phones) {
      for (int s = 0; s < 3; ++s) g.pdf.push_back(lang.pdfs[p][s]);
    }
    chains.emplace_back(first, static_cast<int>(g.pdf.size()) - 1);
    chain_word.push_back(word);
  };
  add({0}, -1);
  for (const Pronunciation& p : lang.prons) add(p.phones, p.word);
  const size_t n = g.pdf.size();
  g.arcs.resize(n);
  g.start.assign(n, -kInf);
  g.final.assign(n, -kInf);
  g.entry_word.assign(n, -1);
  for (size_t c = 0; c < chains.size(); ++c) {
    const auto [first, last] = chains[c];
    g.entry_word[first] = chain_word[c];
    g.start[first] = c == 0 ? log_sil : log_no_sil + entry;
    for (int s = first; s <= last; ++s) {
      const double p = lang.self_loop[g.pdf[s]];
      g.arcs[s].emplace_back(s, std::log(p));
      if (s < last) g.arcs[s].emplace_back(s + 1, std::log(1 - p));
    }
    const double out = std::log(1 - lang.self_loop[g.pdf[last]]);
    for (size_t d = 1; d < chains.size(); ++d) {
      g.arcs[last].emplace_back(chains[d].first, out + (c == 0 ? 0.0 : log_no_sil) + entry);
    }
    if (c == 0) {
      g.final[last] = out;
    } else {
      g.arcs[last].emplace_back(chains[0].first, out + log_sil);
      g.final[last] = out + log_no_sil;
    }
  }
  return g;
}

// Best total score of every word sequence over all state paths of `frames` frames: `best` over
// paths that end in a final state, `partial` over every path, each state final with weight 0
// (Kaldi's rule when no final state is active).
void Enumerate(const ExplicitGraph& g, const float* ll, int frames, int num_pdfs, double scale,
               int t, int state, double score, std::vector<int>& words,
               std::map<std::vector<int>, double>& best,
               std::map<std::vector<int>, double>& partial) {
  score += scale * ll[t * num_pdfs + g.pdf[state]];
  if (t + 1 == frames) {
    auto keep = [&](std::map<std::vector<int>, double>& into, double total) {
      if (total == -kInf) return;
      auto [it, fresh] = into.emplace(words, total);
      if (!fresh) it->second = std::max(it->second, total);
    };
    keep(best, score + g.final[state]);
    keep(partial, score);
    return;
  }
  for (const auto& [to, w] : g.arcs[state]) {
    if (w == -kInf) continue;
    const bool enters = to != state && g.entry_word[to] >= 0;
    if (enters) words.push_back(g.entry_word[to]);
    Enumerate(g, ll, frames, num_pdfs, scale, t + 1, to, score + w, words, best, partial);
    if (enters) words.pop_back();
  }
}

TEST(Decoder, ViterbiEqualsBruteForce) {
  Rng rng(2024);
  // Two words, one with two pronunciations sharing a phone: 15 emitting states.
  const Lang lang = TestLang({{"a", {"x"}}, {"b", {"y"}}, {"b", {"x", "y"}}},
                             [&](int) { return 0.1 + 0.8 * rng.Uniform(); });
  const Decoder decoder(lang);
  const int n = lang.NumPdfs();
  int compared_words = 0, with_path = 0, compared_partial = 0;
  for (int trial = 0; trial < 200; ++trial) {
    DecodeOptions o;
    o.beam = kInf;
    o.acoustic_scale = 0.7;
    o.sil_prob = std::vector<double>{0.5, 0.2, 0.0, 0.9}[trial % 4];
    o.word_penalty = std::vector<double>{0.0, 1.5, -0.5}[trial % 3];
    const int frames = 2 + trial % 10;  // 2..11
    std::vector<float> ll(frames * n);
    for (float& v : ll) v = static_cast<float>(2.0 * rng.Gaussian());
    const ExplicitGraph g = BuildGraph(lang, o);
    std::map<std::vector<int>, double> best, partial;
    std::vector<int> words;
    for (int s = 0; s < static_cast<int>(g.pdf.size()); ++s) {
      if (g.start[s] == -kInf) continue;
      if (g.entry_word[s] >= 0) words.push_back(g.entry_word[s]);
      Enumerate(g, ll.data(), frames, n, o.acoustic_scale, 0, s, g.start[s], words, best, partial);
      words.clear();
    }
    const DecodeResult r = decoder.Decode(ll.data(), frames, n, o);
    o.allow_partial = false;
    const DecodeResult complete_only = decoder.Decode(ll.data(), frames, n, o);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ", " << frames << " frames");
    // The best word sequence of `scores` and whether it is unique (by a margin).
    auto top_of = [](const std::map<std::vector<int>, double>& scores) {
      double top = -kInf, second = -kInf;
      std::vector<int> top_words;
      for (const auto& [seq, score] : scores) {
        if (score > top) {
          second = top;
          top = score;
          top_words = seq;
        } else {
          second = std::max(second, score);
        }
      }
      return std::make_tuple(top, top_words, second < top - 1e-6);
    };
    if (best.empty()) {
      EXPECT_FALSE(complete_only.found);
      ASSERT_FALSE(partial.empty());  // some path always lasts 2..11 frames here
      const auto [top, top_words, unique] = top_of(partial);
      ASSERT_TRUE(r.found);
      EXPECT_TRUE(r.partial);
      EXPECT_NEAR(r.score, top, 1e-9 * std::max(1.0, std::fabs(top)));
      if (unique) {
        EXPECT_EQ(r.word_ids, top_words);
        ++compared_partial;
      }
      continue;
    }
    ++with_path;
    const auto [top, top_words, unique] = top_of(best);
    ASSERT_TRUE(r.found);
    EXPECT_FALSE(r.partial);
    EXPECT_NEAR(r.score, top, 1e-9 * std::max(1.0, std::fabs(top)));
    EXPECT_EQ(complete_only.word_ids, r.word_ids);  // the option changes only partial paths
    if (unique) {
      EXPECT_EQ(r.word_ids, top_words);
      ++compared_words;
    }
  }
  std::cout << "[ brute    ] " << compared_partial << " partial paths compared\n";
  std::cout << "[ brute    ] " << with_path << " of 200 trials with a path, " << compared_words
            << " with a unique best word sequence\n";
  EXPECT_GT(with_path, 150);
  EXPECT_GT(compared_words, 130);
  EXPECT_GT(compared_partial, 5);
}

// 1000 frames of random log-likelihoods through the whole digit graph: a path is always found
// (the decoder's speed is not asserted here; every decode logs its real-time factor).
TEST(Decoder, LongRandomInputAlwaysHasAPath) {
  // A 60-pdf, 114-state digit graph.
  const Lang lang = DigitsLang();
  const Decoder decoder(lang);
  const int n = lang.NumPdfs(), frames = 1000;
  Rng rng(7);
  DecodeOptions o;
  for (int i = 0; i < 5; ++i) {
    std::vector<float> ll(frames * n);
    for (float& v : ll) v = static_cast<float>(-5.0 + 3.0 * rng.Gaussian());
    const auto r = decoder.Decode(ll.data(), frames, n, o);
    EXPECT_TRUE(r.found) << "trial " << i;
  }
}

TEST(LogLikelihoods, PriorsAndFloors) {
  // 2 frames x 3 pdfs; counts 1, 3, 0 -> priors 1/4, 3/4, unseen.
  const std::vector<float> post = {0.5f, 0.5f, 0.0f, 0.0f, 0.9f, 0.1f};
  const std::vector<float> ll = LogLikelihoods(post.data(), 2, 3, {1.0, 3.0, 0.0});
  const double unseen = std::log(std::sqrt(static_cast<double>(FLT_MAX)));
  EXPECT_FLOAT_EQ(ll[0], static_cast<float>(std::log(0.5) - std::log(0.25)));
  EXPECT_FLOAT_EQ(ll[1], static_cast<float>(std::log(0.5) - std::log(0.75)));
  EXPECT_FLOAT_EQ(ll[2], static_cast<float>(std::log(1e-20) - unseen));
  EXPECT_FLOAT_EQ(ll[3], static_cast<float>(std::log(1e-20) - std::log(0.25)));
  EXPECT_FLOAT_EQ(ll[5], static_cast<float>(std::log(0.1) - unseen));
  EXPECT_TRUE(Contains(ErrorOf([&] {
                         LogLikelihoods(post.data(), 2, 3, {1.0, 2.0});
                       }),
                       "2 label counts (priors) for 3 pdfs"));
  EXPECT_TRUE(Contains(ErrorOf([&] {
                         LogLikelihoods(post.data(), 2, 3, {0.0, 0.0, 0.0});
                       }),
                       "all zero"));
}

}  // namespace
}  // namespace mavg
