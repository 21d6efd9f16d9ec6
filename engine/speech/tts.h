#pragma once
// Text-to-speech for the digits corpus, through the synthesisers' libraries: flite (voices
// kal16, kal (8 kHz), awb, rms, slt) and espeak-ng (English voices and their variants). Each
// synthesis returns 16 kHz audio and the phone segments the synthesiser itself placed, mapped to
// the corpus phone set (CMU phones, `sil` for pauses), which become the frame alignments.
//
// Both libraries keep global state: use one Synthesizer per process, from one thread.

#include <memory>
#include <string>
#include <vector>

#include "engine/speech/wav.h"

namespace mavg {

// The corpus's audio: every synthesis is resampled to this rate (Hz).
inline constexpr int kCorpusSampleRate = 16000;

struct Prosody {
  double rate = 1.0;   // speaking-rate factor: > 1 is faster (flite: 1 / duration_stretch)
  double pitch = 0.0;  // pitch offset in semitones (flite diphone voices: f0 mean; espeak:
                       // pitch parameter)
};

struct PhoneSegment {
  std::string phone;              // corpus phone set (e.g. "th", "iy", "sil")
  double start = 0.0, end = 0.0;  // seconds
};

struct Synthesis {
  Waveform audio;                    // kCorpusSampleRate mono
  std::vector<PhoneSegment> phones;  // contiguous, covering [0, duration]
  bool aligned_by_synth = true;      // false when a word fell back to a uniform split
};

// The pronunciation of every digit word, from flite's lexicon (CMU phones).
using Pronunciations = std::vector<std::pair<std::string, std::vector<std::string>>>;

class Synthesizer {
 public:
  // Initialises both engines; throws naming the missing Debian package when one is absent.
  Synthesizer();
  ~Synthesizer();
  Synthesizer(const Synthesizer&) = delete;
  Synthesizer& operator=(const Synthesizer&) = delete;

  // Voices usable here: "flite:kal16", "flite:kal", "flite:awb", "flite:rms", "flite:slt",
  // "espeak:en-us", "espeak:en-us+f3", ... (see the .cpp for the list).
  static std::vector<std::string> Voices();
  // More eSpeak variants (voice quality and formants of other speakers, the same phonemes): the
  // scaled digits presets (x1 ... x8) add them to Voices().
  static std::vector<std::string> ExtraVoices();

  // `words` must be digit words known to `Lexicon()`.
  Synthesis Synthesize(const std::string& voice, const std::vector<std::string>& words,
                       const Prosody& prosody);
  // Pronunciations of the eleven digit words (oh, zero, ..., nine).
  const Pronunciations& Lexicon() const { return lexicon_; }

 private:
  Synthesis SynthesizeFlite(const std::string& voice, const std::string& text,
                            const Prosody& prosody);
  Synthesis SynthesizeEspeak(const std::string& voice, const std::vector<std::string>& words,
                             const Prosody& prosody);

  Pronunciations lexicon_;
  int espeak_rate_ = 0;  // espeak's output sample rate
};

extern const char* const kDigitWords[11];

}  // namespace mavg
