#pragma once
// Export to Kaldi nnet1's text format, readable by nnet-forward / nnet-copy:
//   <Nnet>
//   <Splice> 440 40  [ -5 ... 5 ]        (feature transform, optional)
//   <AddShift> 440 440 <LearnRateCoef> 0 [ ... ]
//   <Rescale> 440 440 <LearnRateCoef> 0 [ ... ]
//   <AffineTransform> out in <LearnRateCoef> 1 <BiasLearnRateCoef> 1 <MaxNorm> 0 [ W ] [ b ]
//   <Sigmoid> d d   ...   <Softmax> n n
//   </Nnet>
// Each component ends with <!EndOfComponent>, as Kaldi itself writes.

#include <ostream>

#include "engine/nn/model.h"

namespace mavg {

// The DNN (affine + activations + softmax). With include_transform, the splice/shift/rescale
// feature transform is prepended so the file maps raw features to posteriors on its own.
void WriteKaldiNnet1(const Model& model, bool include_transform, std::ostream& out);
// Only the feature transform (Kaldi's final.feature_transform).
void WriteKaldiFeatureTransform(const FeatureTransform& transform, std::ostream& out);

}  // namespace mavg
