// Decoding a set of utterances against a `text` file (threads, totals, errors naming the
// utterance) and the model's log-likelihoods (CMVN, splicing, batching across utterances).
#include "engine/decode/decode_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/backend/device_buffer.h"
#include "engine/core/files.h"
#include "tests/testing/test_util.h"
#include "tests/unit/decode/decode_test_util.h"

namespace mavg {
namespace {

using testing_decode::Contains;
using testing_decode::ErrorOf;
using testing_decode::FavourPdfs;
using testing_decode::OneTwoLang;
using testing_decode::PdfsOf;

kaldi::HostMatrix ToHostMatrix(const std::vector<float>& ll, int cols) {
  kaldi::HostMatrix m;
  m.cols = cols;
  m.rows = static_cast<int64_t>(ll.size()) / cols;
  m.data = ll;
  return m;
}

struct Fixture {
  Lang lang = OneTwoLang();
  Decoder decoder{lang};
  std::vector<std::string> utt_ids = {"u1", "u2", "u3", "u4"};
  std::vector<kaldi::HostMatrix> loglikes;

  Fixture() {
    const std::vector<int> sil = PdfsOf(lang, {"sil"});
    const std::vector<int> one = PdfsOf(lang, {"w", "ah", "n"});
    const std::vector<int> two = PdfsOf(lang, {"t", "uw"});
    auto cat = [](std::initializer_list<std::vector<int>> parts) {
      std::vector<int> out;
      for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
      return out;
    };
    const int n = lang.NumPdfs();
    loglikes.push_back(ToHostMatrix(FavourPdfs(cat({sil, one, two, sil}), n), n));  // one two
    loglikes.push_back(ToHostMatrix(FavourPdfs(cat({one}), n), n));                 // one
    loglikes.push_back(ToHostMatrix(FavourPdfs(cat({sil, one, sil}), n), n));       // one
    loglikes.push_back(ToHostMatrix(FavourPdfs(cat({sil}), n), n));                 // (nothing)
  }
};

TEST(DecodeDataDir, ScoresAgainstTextWithAnyNumberOfThreads) {
  testing::TempDir dir;
  WriteFileAtomic(dir.File("text"), "u1 one two\nu2 two\nu3 one one\nu4\nu5 two\n");
  Fixture f;
  DecodeSetOptions options;
  options.decode.acoustic_scale = 1.0;
  const DecodeSetResult r = DecodeDataDir(f.decoder, dir.Path(), f.utt_ids, f.loglikes, options);
  EXPECT_EQ(r.utt_ids, f.utt_ids);
  EXPECT_EQ(r.hyps, (std::vector<std::string>{"one two", "one", "one", ""}));
  EXPECT_EQ(r.stats.ref_words, 5);
  EXPECT_EQ(r.stats.correct, 3);
  EXPECT_EQ(r.stats.sub, 1);
  EXPECT_EQ(r.stats.del, 1);
  EXPECT_EQ(r.stats.ins, 0);
  EXPECT_EQ(r.stats.sentences, 4);
  EXPECT_EQ(r.stats.sentence_errors, 2);
  EXPECT_EQ(r.no_path, 0);
  EXPECT_EQ(r.partial, 0);
  EXPECT_EQ(r.frames, 42 + 18 + 30 + 6);
  EXPECT_DOUBLE_EQ(r.audio_seconds, 0.96);
  EXPECT_GT(r.decode_seconds, 0.0);
  EXPECT_EQ(r.alignments[1],
            "id: (u2)\nScores: (#C #S #D #I) 0 1 0 0\nREF:  TWO\nHYP:  ONE\nEval: S\n");
  for (int threads : {2, 3, 8}) {
    options.threads = threads;
    const DecodeSetResult t = DecodeDataDir(f.decoder, dir.Path(), f.utt_ids, f.loglikes, options);
    EXPECT_EQ(t.hyps, r.hyps) << threads;
    EXPECT_EQ(t.alignments, r.alignments) << threads;
    EXPECT_EQ(t.stats.Errors(), r.stats.Errors()) << threads;
  }
}

// An utterance cut off inside a word is scored by its best partial path; with partial paths off
// it is an empty hypothesis, and the other utterances decode the same either way.
TEST(DecodeDataDir, CountsPartialPaths) {
  testing::TempDir dir;
  WriteFileAtomic(dir.File("text"), "u1 one two\nu2 two\nu3 one one\nu4\nu5 one two\n");
  Fixture f;
  const std::vector<int> cut = [&] {
    std::vector<int> p = PdfsOf(f.lang, {"w", "ah", "n"});
    for (int pdf : PdfsOf(f.lang, {"t"})) p.push_back(pdf);
    return p;
  }();
  const int n = f.lang.NumPdfs();
  f.utt_ids.push_back("u5");
  f.loglikes.push_back(
      ToHostMatrix(FavourPdfs(cut, n, -std::numeric_limits<float>::infinity()), n));
  DecodeSetOptions options;
  options.decode.acoustic_scale = 1.0;
  const DecodeSetResult r = DecodeDataDir(f.decoder, dir.Path(), f.utt_ids, f.loglikes, options);
  EXPECT_EQ(r.hyps.back(), "one two");
  EXPECT_EQ(r.partial, 1);
  EXPECT_EQ(r.no_path, 0);
  options.decode.allow_partial = false;
  const DecodeSetResult old = DecodeDataDir(f.decoder, dir.Path(), f.utt_ids, f.loglikes, options);
  EXPECT_EQ(old.hyps.back(), "");
  EXPECT_EQ(old.partial, 0);
  EXPECT_EQ(old.no_path, 1);
  EXPECT_EQ(old.stats.del - r.stats.del, 2);
  for (size_t u = 0; u + 1 < r.hyps.size(); ++u) EXPECT_EQ(old.hyps[u], r.hyps[u]) << u;
}

TEST(DecodeDataDir, ErrorsNameTheUtterance) {
  testing::TempDir dir;
  Fixture f;
  DecodeSetOptions options;
  options.threads = 2;
  auto decode = [&] { DecodeDataDir(f.decoder, dir.Path(), f.utt_ids, f.loglikes, options); };
  WriteFileAtomic(dir.File("text"), "u1 one two\nu2 two\nu4\n");
  EXPECT_TRUE(Contains(ErrorOf(decode), "text: no transcript for utterance 'u3'"));
  WriteFileAtomic(dir.File("text"), "u1 one two\nu2 two\nu3 one ten\nu4\n");
  EXPECT_TRUE(Contains(ErrorOf(decode), "utterance 'u3': word 'ten' is not in the lexicon"));
  WriteFileAtomic(dir.File("text"), "u1 one two\nu2 two\nu3 one\nu4\nu2 one\n");
  EXPECT_TRUE(Contains(ErrorOf(decode), "duplicate utterance 'u2'"));
  WriteFileAtomic(dir.File("text"), "u1 one two\nu2 two\nu3 one\nu4\n");
  f.loglikes[2].data[7] = std::numeric_limits<float>::quiet_NaN();
  f.loglikes[3].data[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(Contains(ErrorOf(decode), "utterance 'u3': decode: log-likelihood of frame 0 pdf 7"));
  f.loglikes[2].cols = 5;
  EXPECT_TRUE(Contains(ErrorOf(decode), "utterance 'u3': 5 log-likelihood columns"));
  f.loglikes.pop_back();
  EXPECT_TRUE(Contains(ErrorOf(decode), "4 utterance ids but 3 matrices"));
}

TEST(ModelLogLikelihoods, MatchesFrameByFrameReference) {
  auto backend = testing::MakeBackend("cpu");
  const int raw_dim = 3, context = 1, num_pdfs = 4;
  Model model;
  model.transform.raw_dim = raw_dim;
  model.transform.context = context;
  model.transform.shift = {-1.0f, 0.5f, 2.0f};
  model.transform.scale = {0.5f, 2.0f, 1.5f};
  model.label_counts = {10, 30, 40, 20};
  model.network = std::make_unique<Network>(
      *backend, NetworkSpec{raw_dim * (2 * context + 1), num_pdfs, {5}, LayerKind::kSigmoid});
  const testing::HostMat params = testing::RandomHost(1, model.network->NumParams(), 3);
  backend->CopyFromHost(params.v.data(), model.network->Params());

  Dataset data;
  data.source = "test";
  data.dim = raw_dim;
  const testing::HostMat feats = testing::RandomHost(9, raw_dim, 4, 2.0);
  data.Append("a", feats.v.data(), 4, nullptr);
  data.Append("b", feats.v.data() + 4 * raw_dim, 1, nullptr);
  data.Append("c", feats.v.data() + 5 * raw_dim, 4, nullptr);

  const std::vector<kaldi::HostMatrix> ll = ModelLogLikelihoods(model, data, /*batch=*/3);
  ASSERT_EQ(ll.size(), 3u);
  Matrix x(*backend, 1, raw_dim * (2 * context + 1));
  for (int u = 0; u < 3; ++u) {
    const int64_t n = data.UttFrames(u);
    ASSERT_EQ(ll[u].rows, n);
    ASSERT_EQ(ll[u].cols, num_pdfs);
    for (int64_t t = 0; t < n; ++t) {
      std::vector<float> spliced;
      for (int64_t k = t - context; k <= t + context; ++k) {
        const int64_t src = std::clamp<int64_t>(k, 0, n - 1);  // edge frames repeated
        const float* frame = data.Frame(data.offsets[u] + src);
        for (int d = 0; d < raw_dim; ++d) {
          spliced.push_back((frame[d] + model.transform.shift[d]) * model.transform.scale[d]);
        }
      }
      backend->CopyFromHost(spliced.data(), x);
      const testing::HostMat post =
          testing::ToHost(*backend, model.network->ForwardPosteriors(x.View()));
      for (int j = 0; j < num_pdfs; ++j) {
        const double expected = std::log(post.v[j]) - std::log(model.label_counts[j] / 100.0);
        EXPECT_NEAR(ll[u].Row(t)[j], expected, 1e-5) << u << " " << t << " " << j;
      }
    }
  }
  // The features themselves are left alone.
  EXPECT_EQ(data.feats, feats.v);

  data.dim = 2;
  EXPECT_TRUE(Contains(ErrorOf([&] { ModelLogLikelihoods(model, data); }),
                       "features have 2 dimensions, the model expects 3"));
  data.dim = raw_dim;
  model.label_counts.clear();
  EXPECT_TRUE(Contains(ErrorOf([&] { ModelLogLikelihoods(model, data); }), "label counts"));
}

}  // namespace
}  // namespace mavg
