#include "engine/train/step.h"

#include "engine/data/minibatch.h"

namespace mavg {

void TrainStep(Network& net, Optimizer& optimizer, ConstMatrixView input, const int32_t* labels,
               float lr, double* stats) {
  Backend& backend = net.GetBackend();
  net.ForwardLogits(input);
  MatrixView logits = net.LogitsBuffer();
  backend.SoftmaxCrossEntropy(logits, labels, logits, stats);  // gradient in place
  // Updates may wait for the end of the pass (NG-SGD on a GPU: all layers' small steps at once).
  optimizer.BeginStep();
  net.Backward([&](int k, AffineLayer& layer, ConstMatrixView in, MatrixView out_grad) {
    optimizer.UpdateAffine(k, layer, in, out_grad, lr);
  });
  optimizer.FinishStep();
}

EvalSums Evaluate(Network& net, const Dataset& data, const std::vector<int>& utts, int context,
                  int64_t batch) {
  Backend& backend = net.GetBackend();
  MinibatchOptions options;
  options.minibatch = batch;
  options.context = context;
  options.shuffle = false;
  MinibatchReader reader(data, utts, options);
  DeviceBuffer<double> stats(backend, 3);
  const double zeros[3] = {0, 0, 0};
  stats.CopyFromHost(zeros, 3);
  Matrix x(backend, batch, reader.SplicedDim());
  DeviceBuffer<int32_t> labels(backend, static_cast<size_t>(batch));
  std::vector<float> host_x;
  std::vector<int32_t> host_labels;
  while (int64_t n = reader.Next(host_x, host_labels)) {
    MatrixView xv = x.View().RowRange(0, n);
    backend.CopyFromHost(host_x.data(), xv);
    labels.CopyFromHost(host_labels.data(), static_cast<size_t>(n));
    ConstMatrixView logits = net.ForwardLogits(xv);
    backend.SoftmaxCrossEntropy(logits, labels.Data(), MatrixView(), stats.Data());
  }
  const std::vector<double> s = stats.ToHost();
  return EvalSums{s[0], s[1], s[2]};
}

}  // namespace mavg
