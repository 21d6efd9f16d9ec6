// The TTS front end: lexicon, audio format, alignments that cover the audio and follow the
// lexicon, determinism, errors.
#include "engine/speech/tts.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "engine/core/error.h"

namespace mavg {
namespace {

Synthesizer& Synth() {
  static Synthesizer synth;  // the TTS libraries are process-wide
  return synth;
}

std::vector<std::string> Expected(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const auto& w : words) {
    const auto& lex = Synth().Lexicon();
    const auto it =
        std::find_if(lex.begin(), lex.end(), [&](const auto& e) { return e.first == w; });
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

TEST(Tts, LexiconIsFlitesPronunciations) {
  const auto& lex = Synth().Lexicon();
  ASSERT_EQ(lex.size(), 11u);
  for (const auto& [w, p] : lex) {
    if (w == "seven") {
      EXPECT_EQ(p, (std::vector<std::string>{"s", "eh", "v", "ax", "n"}));
    }
    if (w == "three") {
      EXPECT_EQ(p, (std::vector<std::string>{"th", "r", "iy"}));
    }
  }
}

TEST(Tts, EveryVoiceGivesAlignedSixteenKilohertzAudio) {
  const std::vector<std::string> words = {"three", "oh", "seven", "nine"};
  int synth_aligned = 0;
  for (const std::string& voice : Synthesizer::Voices()) {
    const Synthesis s = Synth().Synthesize(voice, words, Prosody{1.1, 2.0});
    ASSERT_EQ(s.audio.sample_rate, 16000) << voice;
    const double duration = static_cast<double>(s.audio.samples.size()) / 16000;
    EXPECT_GT(duration, 0.8) << voice;
    // Segments are contiguous, cover the audio, and speak the lexicon's phones in order.
    ASSERT_FALSE(s.phones.empty());
    EXPECT_DOUBLE_EQ(s.phones.front().start, 0.0);
    EXPECT_NEAR(s.phones.back().end, duration, 1e-9) << voice;
    std::vector<std::string> spoken;
    for (size_t i = 0; i < s.phones.size(); ++i) {
      if (i > 0) {
        EXPECT_DOUBLE_EQ(s.phones[i].start, s.phones[i - 1].end);
      }
      EXPECT_GT(s.phones[i].end, s.phones[i].start);
      if (s.phones[i].phone != "sil") spoken.push_back(s.phones[i].phone);
    }
    EXPECT_EQ(spoken, Expected(words)) << voice;
    synth_aligned += s.aligned_by_synth;
  }
  // Nearly all voices place the phones themselves (a uniform split is the fallback).
  EXPECT_GE(synth_aligned, static_cast<int>(Synthesizer::Voices().size()) - 2);
}

TEST(Tts, ProsodyChangesTheAudio) {
  const std::vector<std::string> words = {"one", "two"};
  for (const char* voice : {"flite:kal16", "flite:slt", "espeak:en-us"}) {
    const Synthesis a = Synth().Synthesize(voice, words, Prosody{1.0, 0.0});
    const Synthesis slow = Synth().Synthesize(voice, words, Prosody{0.8, 0.0});
    EXPECT_GT(slow.audio.samples.size(), a.audio.samples.size() * 11 / 10) << voice;
  }
  // flite is a pure function of its input; eSpeak carries state between utterances (the
  // corpus builder therefore synthesises fixed lanes in fresh processes).
  const Synthesis a = Synth().Synthesize("flite:kal16", words, Prosody{});
  const Synthesis b = Synth().Synthesize("flite:kal16", words, Prosody{});
  EXPECT_EQ(a.audio.samples, b.audio.samples);
}

TEST(Tts, UnknownWordsAndVoicesAreErrors) {
  EXPECT_THROW(Synth().Synthesize("flite:kal16", {"one", "hundred"}, Prosody{}), Error);
  EXPECT_THROW(Synth().Synthesize("flite:nobody", {"one"}, Prosody{}), Error);
  EXPECT_THROW(Synth().Synthesize("espeak:xx-nowhere", {"one"}, Prosody{}), Error);
  EXPECT_THROW(Synth().Synthesize("sapi:david", {"one"}, Prosody{}), Error);
}

}  // namespace
}  // namespace mavg
