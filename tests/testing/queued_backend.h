#pragma once
// A backend whose work runs late, as a GPU's does: every operation is queued, in order, and runs
// only when the host waits for it (Synchronize, a copy or a value back to the host, WaitEvent,
// SecondsBetween). Underneath it is the CPU backend, so results are the CPU's maths on the
// device path of the algorithms (HostReadsDeviceMemory() is false). Copies from the host take
// their data when called, as CUDA's from pageable memory do; CopyFromStagingAsync reads its
// source when it runs, so a host that rewrites staging memory before waiting for the copy's
// event sends the new contents, as it would on a GPU. Events complete in queue order; the time
// between two is a millisecond per operation queued between them. A batch of small steps runs
// in reverse order (they must not depend on each other). Tests only: not thread-safe.

#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/backend.h"

namespace mavg::testing {

class QueuedBackend final : public Backend {
 public:
  QueuedBackend() : cpu_(CreateBackend(BackendOptions{DeviceKind::kCpu, 0, 2, false})) {}
  ~QueuedBackend() override { RunAll(); }

  // Operations queued and not yet run.
  size_t Pending() const { return queue_.size(); }

  DeviceKind Kind() const override { return DeviceKind::kCpu; }
  std::string Describe() const override { return "queued " + cpu_->Describe(); }
  std::string Kernels() const override { return cpu_->Kernels(); }

  void* AllocateBytes(size_t bytes) override { return cpu_->AllocateBytes(bytes); }
  void FreeBytes(void* ptr) override {
    Queue([this, ptr] { cpu_->FreeBytes(ptr); });
  }
  void CopyBytesToDevice(void* dst, const void* src, size_t bytes) override {
    auto data = Snapshot(src, bytes);
    Queue([dst, data, bytes] { std::memcpy(dst, data->data(), bytes); });
  }
  void CopyBytesToHost(void* dst, const void* src, size_t bytes) override {
    RunAll();
    cpu_->CopyBytesToHost(dst, src, bytes);
  }
  void CopyBytesOnDevice(void* dst, const void* src, size_t bytes) override {
    Queue([this, dst, src, bytes] { cpu_->CopyBytesOnDevice(dst, src, bytes); });
  }
  void Synchronize() override { RunAll(); }
  void CopyFromHost(const float* src, MatrixView dst) override {
    auto data = Snapshot(src, static_cast<size_t>(dst.Size()) * sizeof(float));
    Queue([this, data, dst] {
      cpu_->CopyFromHost(reinterpret_cast<const float*>(data->data()), dst);
    });
  }
  void CopyToHost(ConstMatrixView src, float* dst) override {
    RunAll();
    cpu_->CopyToHost(src, dst);
  }

  bool RunsAsynchronously() const override { return true; }
  void CopyFromStagingAsync(const void* staging, void* dst, size_t bytes) override {
    Queue([staging, dst, bytes] {
      if (bytes > 0) std::memcpy(dst, staging, bytes);
    });
  }
  void* CreateEvent() override { return new Event; }
  void DestroyEvent(void* event) override { delete static_cast<Event*>(event); }
  void RecordEvent(void* event) override { static_cast<Event*>(event)->mark = queued_; }
  void WaitEvent(void* event) override { RunUntil(static_cast<Event*>(event)->mark); }
  double SecondsBetween(void* start, void* end) override {
    const uint64_t a = static_cast<Event*>(start)->mark, b = static_cast<Event*>(end)->mark;
    RunUntil(b);
    return static_cast<double>(b - a) * 1e-3;
  }

  void Gemm(bool ta, bool tb, float alpha, ConstMatrixView a, ConstMatrixView b, float beta,
            MatrixView c) override {
    Queue([=, this] { cpu_->Gemm(ta, tb, alpha, a, b, beta, c); });
  }
  void Copy(ConstMatrixView src, MatrixView dst) override {
    Queue([=, this] { cpu_->Copy(src, dst); });
  }
  void Fill(MatrixView x, float value) override {
    Queue([=, this] { cpu_->Fill(x, value); });
  }
  void Axpby(float alpha, ConstMatrixView x, float beta, MatrixView y) override {
    Queue([=, this] { cpu_->Axpby(alpha, x, beta, y); });
  }
  void AddRowVector(float alpha, ConstMatrixView row, float beta, MatrixView m) override {
    Queue([=, this] { cpu_->AddRowVector(alpha, row, beta, m); });
  }
  void SumRows(float alpha, ConstMatrixView m, float beta, MatrixView out) override {
    Queue([=, this] { cpu_->SumRows(alpha, m, beta, out); });
  }
  double SumSquares(ConstMatrixView x) override {
    RunAll();
    return cpu_->SumSquares(x);
  }
  void RowSumSquares(ConstMatrixView x, MatrixView out) override {
    Queue([=, this] { cpu_->RowSumSquares(x, out); });
  }
  void MulRowsAdd(ConstMatrixView scales, ConstMatrixView x, float beta, MatrixView y) override {
    Queue([=, this] { cpu_->MulRowsAdd(scales, x, beta, y); });
  }
  void MeanOfReplicas(const std::vector<MatrixView>& replicas) override {
    Queue([=, this] { cpu_->MeanOfReplicas(replicas); });
  }
  void AxpbyScaled(const float* scalar, float alpha, ConstMatrixView x, float beta,
                   MatrixView y) override {
    Queue([=, this] { cpu_->AxpbyScaled(scalar, alpha, x, beta, y); });
  }
  void RunNgsgdSmall(const NgsgdSmallTask& task) override {
    Queue([=, this] { cpu_->RunNgsgdSmall(task); });
  }
  void RunNgsgdSmallBatch(const std::vector<NgsgdSmallTask>& tasks) override {
    ++batches_;
    Queue([=, this] {
      for (auto t = tasks.rbegin(); t != tasks.rend(); ++t) cpu_->RunNgsgdSmall(*t);
    });
  }
  void RunRbmSmall(const RbmSmallTask& task) override {
    Queue([=, this] { cpu_->RunRbmSmall(task); });
  }
  // Batches of small steps queued so far.
  int Batches() const { return batches_; }

  void RandomUniform(uint64_t seed, uint64_t offset, MatrixView x) override {
    Queue([=, this] { cpu_->RandomUniform(seed, offset, x); });
  }
  void RandomGaussian(uint64_t seed, uint64_t offset, float stddev, MatrixView x) override {
    Queue([=, this] { cpu_->RandomGaussian(seed, offset, stddev, x); });
  }
  void SampleBernoulli(uint64_t seed, uint64_t offset, ConstMatrixView probs,
                       MatrixView out) override {
    Queue([=, this] { cpu_->SampleBernoulli(seed, offset, probs, out); });
  }

  void Sigmoid(ConstMatrixView x, MatrixView y) override {
    Queue([=, this] { cpu_->Sigmoid(x, y); });
  }
  void Tanh(ConstMatrixView x, MatrixView y) override {
    Queue([=, this] { cpu_->Tanh(x, y); });
  }
  void Relu(ConstMatrixView x, MatrixView y) override {
    Queue([=, this] { cpu_->Relu(x, y); });
  }
  void Softmax(ConstMatrixView x, MatrixView y) override {
    Queue([=, this] { cpu_->Softmax(x, y); });
  }
  void SigmoidBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) override {
    Queue([=, this] { cpu_->SigmoidBackward(y, dy, dx); });
  }
  void TanhBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) override {
    Queue([=, this] { cpu_->TanhBackward(y, dy, dx); });
  }
  void ReluBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) override {
    Queue([=, this] { cpu_->ReluBackward(y, dy, dx); });
  }
  void SoftmaxCrossEntropy(ConstMatrixView logits, const int32_t* labels, MatrixView grad,
                           double* stats) override {
    Queue([=, this] { cpu_->SoftmaxCrossEntropy(logits, labels, grad, stats); });
  }

 private:
  struct Event {
    uint64_t mark = 0;  // operations queued before it was recorded
  };

  static std::shared_ptr<std::vector<char>> Snapshot(const void* src, size_t bytes) {
    auto data = std::make_shared<std::vector<char>>(bytes);
    if (bytes > 0) std::memcpy(data->data(), src, bytes);
    return data;
  }
  void Queue(std::function<void()> op) {
    queue_.push_back(std::move(op));
    ++queued_;
  }
  // Runs the operations queued before `mark`.
  void RunUntil(uint64_t mark) {
    while (done_ < mark && !queue_.empty()) {
      std::function<void()> op = std::move(queue_.front());
      queue_.pop_front();
      ++done_;
      op();
    }
  }
  void RunAll() { RunUntil(queued_); }

  std::unique_ptr<Backend> cpu_;  // owned: where the work runs
  std::deque<std::function<void()>> queue_;
  uint64_t queued_ = 0, done_ = 0;  // operations queued and run so far
  int batches_ = 0;
};

}  // namespace mavg::testing
