// The digits corpus presets: the calibration corpus unchanged, the scaled family k x its first
// member's training utterances with the same speakers, voices and noise conditions.
#include <gtest/gtest.h>

#include "engine/speech/digits.h"
#include "engine/speech/tts.h"

namespace mavg {
namespace {

TEST(DigitsPresets, FullIsTheCalibrationCorpus) {
  const DigitsOptions full = PresetOptions(DigitsSize::kFull);
  const DigitsOptions defaults;
  EXPECT_EQ(full.train_utts, 3000);
  EXPECT_EQ(full.train_utts, defaults.train_utts);
  EXPECT_EQ(full.test_utts, defaults.test_utts);
  EXPECT_EQ(full.speakers_per_voice, defaults.speakers_per_voice);
  EXPECT_TRUE(full.voices.empty());  // Synthesizer::Voices()
  EXPECT_EQ(full.noises, defaults.noises);
  EXPECT_EQ(full.noises.size(), 3u);
  EXPECT_EQ(full.preset, "full");
  EXPECT_FALSE(full.train_last);  // the calibration corpus keeps its synthesis order
}

TEST(DigitsPresets, TheScaledFamilyOnlyGrowsTraining) {
  const DigitsOptions x1 = PresetOptions(DigitsSize::kX1);
  int k = 1;
  for (DigitsSize size : {DigitsSize::kX1, DigitsSize::kX2, DigitsSize::kX4, DigitsSize::kX8}) {
    const DigitsOptions x = PresetOptions(size);
    EXPECT_EQ(x.train_utts, k * x1.train_utts) << x.preset;
    EXPECT_EQ(x.dev_utts, x1.dev_utts) << x.preset;
    EXPECT_EQ(x.test_utts, x1.test_utts) << x.preset;
    EXPECT_EQ(x.test_seen_utts, x1.test_seen_utts) << x.preset;
    EXPECT_EQ(x.speakers_per_voice, x1.speakers_per_voice) << x.preset;
    EXPECT_EQ(x.voices, x1.voices) << x.preset;
    EXPECT_EQ(x.noises, x1.noises) << x.preset;
    EXPECT_TRUE(x.train_last) << x.preset;
    k *= 2;
  }
  // More voices, speakers and noise conditions than the calibration corpus.
  const DigitsOptions full = PresetOptions(DigitsSize::kFull);
  EXPECT_EQ(x1.voices.size(), Synthesizer::Voices().size() + Synthesizer::ExtraVoices().size());
  EXPECT_GT(Synthesizer::ExtraVoices().size(), 0u);
  EXPECT_GT(x1.speakers_per_voice, full.speakers_per_voice);
  EXPECT_GT(x1.noises.size(), full.noises.size());
  // Four times the training utterances at x4 (frames follow: the same utterance distribution).
  EXPECT_GE(PresetOptions(DigitsSize::kX4).train_utts, 4 * full.train_utts);
}

}  // namespace
}  // namespace mavg
