#pragma once
// Export to Kaldi nnet1's text format, readable by nnet-forward / nnet-copy:
//   <Nnet>
//   <Splice> 440 40  [ -5 ... 5 ]        (feature transform, optional)
//   <AddShift> 440 440 <LearnRateCoef> 0 [ ... ]
//   <Rescale> 440 440 <LearnRateCoef> 0 [ ... ]
//   <AffineTransform> out in <LearnRateCoef> 1 <BiasLearnRateCoef> 1 <MaxNorm> 0 [ W ] [ b ]
//   <Sigmoid> d d | <Tanh> d d | <ParametricRelu> d d <BiasLearnRateCoef> 0 <LearnRateCoef> 0
//     [ 1 ... ] [ 0 ... ]  (relu: slope 1 above zero, 0 below; nnet1 has no plain <ReLU>)
//   ...   <Softmax> n n
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
// The training label counts as analyze-counts writes ali_train_pdf.counts: "[ c0 c1 ... ]".
void WriteKaldiCounts(const std::vector<double>& counts, std::ostream& out);

}  // namespace mavg
