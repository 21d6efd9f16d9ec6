#pragma once
// Log mel filterbank features computed as Kaldi's compute-fbank-feats does (feature-window.cc,
// mel-computations.cc, feature-fbank.cc), without dither and without the energy column:
//   frames      snip_edges: 1 + (N - frame_length) / frame_shift frames, 0 when N < frame_length;
//               otherwise round(N / frame_shift) frames centred on multiples of the shift, the
//               signal reflected at both ends;
//   per frame   remove the mean (remove_dc), pre-emphasis x[i] -= preemph * x[i-1] from the end
//               down to x[1], then x[0] -= preemph * x[0]; multiply by the window;
//   spectrum    zero-pad to the next power of two, |X_k|^2 for k = 0..padded/2;
//   mel         num_bins triangles equally spaced on mel(f) = 1127 ln(1 + f/700) between low_freq
//               and high_freq, weights evaluated at the FFT bin frequencies k * rate / padded
//               for k < padded/2 (float arithmetic, as Kaldi);
//   output      log(max(energy, log_floor)).
// Window and frame sizes are computed as Kaldi does: frame_length = int(rate * 0.001 * ms).
//
// The defaults are Kaldi's except num_bins (Kaldi: 23; 40 here, the usual choice for DNN
// acoustic models) and dither (Kaldi: 1.0; none here, so features are deterministic).

#include <fftw3.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/data/kaldi_io.h"

namespace mavg {

struct FbankOptions {
  int sample_rate = 16000;  // Hz
  double frame_length_ms = 25;
  double frame_shift_ms = 10;
  double preemph = 0.97;  // in [0, 1]; 0 turns pre-emphasis off
  int num_bins = 40;      // >= 3
  double low_freq = 20;   // Hz
  double high_freq = 0;   // Hz; 0: Nyquist; negative: Nyquist + value
  bool remove_dc = true;
  std::string window = "povey";  // povey | hamming | hanning | rectangular
  bool snip_edges = true;
  // Kaldi's --energy-floor applies only to the energy column, which we do not produce; kept so
  // that option sets read the same, must be >= 0.
  double energy_floor = 0;
  float log_floor = 1.1920929e-07f;  // FLT_EPSILON, as Kaldi
};

class FbankComputer {
 public:
  // Validates the options (one error listing every problem) and precomputes the window, the mel
  // weights and the FFT plan.
  explicit FbankComputer(const FbankOptions& opts);
  ~FbankComputer();
  FbankComputer(const FbankComputer&) = delete;
  FbankComputer& operator=(const FbankComputer&) = delete;

  // Features of one utterance: [NumFrames(samples.size()) x num_bins], row-major; 0 rows when
  // the signal is shorter than one frame. `samples` are in int16 scale, as Kaldi reads WAV files:
  // pass Waveform::samples x 32768 (the log energies shift by 2 ln 32768 otherwise).
  // Thread-safe: may be called concurrently on one FbankComputer (buffers are per call).
  kaldi::HostMatrix Compute(const std::vector<float>& samples) const;

  int64_t NumFrames(int64_t num_samples) const;
  int FrameLength() const { return frame_length_; }  // samples
  int FrameShift() const { return frame_shift_; }    // samples
  int PaddedLength() const { return padded_length_; }
  const FbankOptions& Options() const { return opts_; }

  // Mel bin b covers FFT bins [first, first + weights.size()) with these weights.
  struct MelBin {
    int first = 0;
    std::vector<float> weights;
  };
  const std::vector<MelBin>& MelBins() const { return mel_bins_; }
  const std::vector<float>& Window() const { return window_; }  // [frame_length]

 private:
  struct PlanDeleter {
    void operator()(fftwf_plan_s* plan) const;
  };

  FbankOptions opts_;
  int frame_length_ = 0;          // samples per frame
  int frame_shift_ = 0;           // samples between frame starts
  int padded_length_ = 0;         // FFT size: power of two >= frame_length_
  std::vector<float> window_;     // [frame_length_]
  std::vector<MelBin> mel_bins_;  // [num_bins]
  // r2c plan of size padded_length_ for 64-byte aligned buffers (fftwf_malloc); executed with
  // per-call buffers through fftwf_execute_dft_r2c.
  std::unique_ptr<fftwf_plan_s, PlanDeleter> plan_;
};

}  // namespace mavg
