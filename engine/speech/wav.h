#pragma once
// WAV files: RIFF/WAVE, 16-bit PCM, mono, the only kind the speech pipeline reads and writes.
// Anything else (not RIFF or WAVE, a compressed or float format, several channels, another bit
// depth, a missing fmt or data chunk, a data chunk shorter than it says) is refused with one line
// naming the file. Chunks other than "fmt " and "data" (LIST, fact, cue, ...) are skipped.

#include <string>
#include <vector>

namespace mavg {

struct Waveform {
  int sample_rate = 0;         // Hz
  std::vector<float> samples;  // mono, int16 value / 32768, so in [-1, 1)
};

// Reads the whole file in one read and converts it.
Waveform ReadWav(const std::string& path);

// Writes 16-bit PCM mono, atomically (WriteFileAtomic). Samples are scaled by 32768, rounded to
// the nearest integer and clipped to [-32768, 32767], i.e. to [-1, 1); a non-finite sample is an
// error.
void WriteWav(const std::string& path, const Waveform& wave);

}  // namespace mavg
