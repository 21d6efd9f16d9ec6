#include "engine/speech/resample.h"

#include <samplerate.h>

#include <cmath>

#include "engine/core/error.h"

namespace mavg {

std::vector<float> Resample(const std::vector<float>& in, int from_rate, int to_rate) {
  MAVG_CHECK(from_rate > 0 && to_rate > 0, "resample: bad sample rates {} -> {} Hz", from_rate,
             to_rate);
  if (from_rate == to_rate || in.empty()) return in;
  const double ratio = static_cast<double>(to_rate) / from_rate;
  MAVG_CHECK(src_is_valid_ratio(ratio),
             "resample: ratio {} -> {} Hz is outside libsamplerate's "
             "range (1/256 to 256)",
             from_rate, to_rate);
  // A little room past the nominal length: libsamplerate never writes more than it is given.
  std::vector<float> out(static_cast<size_t>(std::ceil(in.size() * ratio)) + 16);
  SRC_DATA data{};
  data.data_in = in.data();
  data.data_out = out.data();
  data.input_frames = static_cast<long>(in.size());
  data.output_frames = static_cast<long>(out.size());
  data.src_ratio = ratio;
  const int err = src_simple(&data, SRC_SINC_BEST_QUALITY, /*channels=*/1);
  MAVG_CHECK(err == 0, "resample {} -> {} Hz: {}", from_rate, to_rate, src_strerror(err));
  out.resize(static_cast<size_t>(data.output_frames_gen));
  return out;
}

}  // namespace mavg
