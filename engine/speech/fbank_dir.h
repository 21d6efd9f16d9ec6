#pragma once
// Filterbank features for a whole Kaldi data dir: <dir>/wav.scp in, <dir>/feats.ark and
// <dir>/feats.scp out (as Kaldi's make_fbank.sh, in one archive).

#include <cstdint>
#include <string>

#include "engine/speech/fbank.h"

namespace mavg {

struct FbankDirStats {
  int64_t utterances = 0, frames = 0;
  double audio_seconds = 0;    // total duration of the audio read
  double compute_seconds = 0;  // wall-clock time of the whole call (read, compute, write)
};

// Reads `<data_dir>/wav.scp` (lines `utt-id path.wav`; a relative path is looked up relative to
// the working directory first, then to data_dir; piped commands are not supported), computes
// the features of every utterance on `threads` threads and writes them, in wav.scp order, to
// `<data_dir>/feats.ark` with `<data_dir>/feats.scp` pointing into it by absolute path. Both
// files appear atomically, only when everything succeeded.
// WAV samples are scaled to int16 range before FbankComputer::Compute, as Kaldi does.
// Errors name the utterance: missing or malformed wav, a sample rate other than
// opts.sample_rate, fewer samples than one frame, a duplicate utterance id.
// A non-empty `progress_label` draws a progress line (core/progress.h) with that label.
FbankDirStats ComputeFbankForDataDir(const std::string& data_dir, const FbankOptions& opts,
                                     int threads, const std::string& progress_label = "");

}  // namespace mavg
