// Features for a whole data dir: order, scp offsets, path lookup, and errors naming the
// utterance.

#include "engine/speech/fbank_dir.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/rng.h"
#include "engine/data/kaldi_io.h"
#include "engine/speech/wav.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

Waveform Noise(int rate, double seconds, uint64_t seed) {
  Rng rng(seed);
  Waveform w;
  w.sample_rate = rate;
  w.samples.resize(static_cast<size_t>(rate * seconds));
  for (size_t i = 0; i < w.samples.size(); ++i) {
    w.samples[i] = static_cast<float>(
        std::round((0.2 * std::sin(0.05 * i) + 0.05 * rng.Gaussian()) * 32768) / 32768);
  }
  return w;
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string ErrorOf(const std::string& dir, int threads) {
  try {
    ComputeFbankForDataDir(dir, FbankOptions{}, threads);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

struct Utt {
  std::string id;
  Waveform wave;
};

TEST(FbankDir, WritesEveryUtteranceInScpOrderWithReadableOffsets) {
  testing::TempDir tmp;
  const std::string dir = tmp.File("data");
  fs::create_directories(dir + "/wav");
  // Not sorted, so that order preservation shows; lengths vary so that threads finish out of
  // order.
  std::vector<Utt> utts;
  const std::vector<std::string> ids = {"spk2-b", "spk1-a", "spk3-z", "spk1-c", "spk0-q",
                                        "spk9-x", "spk4-m", "spk5-n", "spk6-o", "spk7-p"};
  std::string scp;
  for (size_t i = 0; i < ids.size(); ++i) {
    utts.push_back({ids[i], Noise(16000, 0.03 + 0.37 * ((i * 7) % 10) / 10.0, i)});
    const std::string name = "wav/" + ids[i] + ".wav";
    WriteWav(dir + "/" + name, utts.back().wave);
    // Half by absolute path, half relative to the data dir.
    scp += ids[i] + " " + (i % 2 == 0 ? dir + "/" + name : name) + "\n";
  }
  WriteText(dir + "/wav.scp", scp);

  const FbankDirStats stats = ComputeFbankForDataDir(dir, FbankOptions{}, 3);
  EXPECT_EQ(stats.utterances, static_cast<int64_t>(ids.size()));
  EXPECT_GE(stats.compute_seconds, 0.0);

  const FbankComputer fbank(FbankOptions{});
  const auto entries = kaldi::ReadScp(dir + "/feats.scp");
  ASSERT_EQ(entries.size(), ids.size());
  int64_t frames = 0;
  double seconds = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(entries[i].first, ids[i]);
    const kaldi::Rxspec spec = kaldi::ParseRxspec(entries[i].second);
    EXPECT_TRUE(fs::path(spec.path).is_absolute()) << entries[i].second;
    EXPECT_EQ(fs::path(spec.path), fs::absolute(dir + "/feats.ark").lexically_normal());
    std::vector<float> scaled = utts[i].wave.samples;
    for (float& x : scaled) x *= 32768.0f;
    const kaldi::HostMatrix expected = fbank.Compute(scaled);
    const kaldi::HostMatrix got = kaldi::ReadMatrix(entries[i].second);
    EXPECT_EQ(got.rows, expected.rows) << ids[i];
    EXPECT_EQ(got.cols, 40);
    EXPECT_EQ(got.data, expected.data) << ids[i];
    frames += got.rows;
    seconds += utts[i].wave.samples.size() / 16000.0;
  }
  EXPECT_EQ(stats.frames, frames);
  EXPECT_NEAR(stats.audio_seconds, seconds, 1e-9);

  // The archive read in order holds the same.
  kaldi::MatrixArchiveReader reader(dir + "/feats.ark");
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(reader.Next());
    EXPECT_EQ(reader.Key(), ids[i]);
  }
  EXPECT_FALSE(reader.Next());

  // One thread writes the same bytes.
  const std::string ark_bytes = [&] {
    std::ifstream in(dir + "/feats.ark", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ComputeFbankForDataDir(dir, FbankOptions{}, 1);
  std::ifstream again(dir + "/feats.ark", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(again), {}), ark_bytes);
}

class FbankDirError : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.File("data");
    fs::create_directories(dir_);
    for (int i = 0; i < 6; ++i) {
      WriteWav(dir_ + "/ok" + std::to_string(i) + ".wav", Noise(16000, 0.2, i));
    }
  }
  // wav.scp: the good utterances around the given bad line(s).
  void WriteScp(const std::string& bad) {
    std::string scp = "ok0 ok0.wav\nok1 ok1.wav\nok2 ok2.wav\n" + bad + "ok3 ok3.wav\n";
    WriteText(dir_ + "/wav.scp", scp);
  }
  void ExpectError(const std::vector<std::string>& parts) {
    for (int threads : {1, 4}) {
      const std::string message = ErrorOf(dir_, threads);
      for (const std::string& part : parts) {
        EXPECT_NE(message.find(part), std::string::npos) << threads << " threads: " << message;
      }
      EXPECT_FALSE(fs::exists(dir_ + "/feats.ark"));
      EXPECT_FALSE(fs::exists(dir_ + "/feats.scp"));
    }
  }

  testing::TempDir tmp_;
  std::string dir_;
};

TEST_F(FbankDirError, WrongSampleRateNamesTheUtterance) {
  WriteWav(dir_ + "/fast.wav", Noise(22050, 0.2, 9));
  WriteScp("utt-fast fast.wav\n");
  ExpectError({"utt-fast", "22050", "16000"});
}

TEST_F(FbankDirError, MissingWavNamesTheUtterance) {
  WriteScp("utt-gone gone.wav\n");
  ExpectError({"utt-gone", "gone.wav", "not found"});
}

TEST_F(FbankDirError, MalformedWavNamesTheUtteranceAndFile) {
  WriteText(dir_ + "/junk.wav", "this is not a wav file at all");
  WriteScp("utt-junk junk.wav\n");
  ExpectError({"utt-junk", "junk.wav", "RIFF"});
}

TEST_F(FbankDirError, UtteranceShorterThanOneFrame) {
  WriteWav(dir_ + "/short.wav", Noise(16000, 0.02, 9));  // 320 samples < 400
  WriteScp("utt-short short.wav\n");
  ExpectError({"utt-short", "shorter than one frame"});
}

TEST_F(FbankDirError, FirstBadUtteranceInScpOrderIsReported) {
  WriteWav(dir_ + "/fast.wav", Noise(22050, 0.5, 9));
  WriteWav(dir_ + "/short.wav", Noise(16000, 0.01, 9));
  WriteScp("utt-first-bad short.wav\nok4 ok4.wav\nutt-second-bad fast.wav\n");
  ExpectError({"utt-first-bad"});
}

TEST_F(FbankDirError, DuplicateIdsAndPipes) {
  WriteScp("ok1 ok4.wav\n");
  ExpectError({"ok1", "twice"});
  WriteScp("utt-pipe sox in.flac -t wav - |\n");
  ExpectError({"utt-pipe", "piped"});
}

TEST(FbankDir, MissingWavScpAndBadThreads) {
  testing::TempDir tmp;
  EXPECT_NE(ErrorOf(tmp.Path(), 1).find("wav.scp"), std::string::npos);
  EXPECT_THROW(ComputeFbankForDataDir(tmp.Path(), FbankOptions{}, 0), Error);
}

}  // namespace
}  // namespace mavg
