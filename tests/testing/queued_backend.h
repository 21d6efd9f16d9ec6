#pragma once
// A backend whose work runs late, as a GPU's does: every operation is queued, in order, and runs
// only when the host waits for it (Synchronize, a copy or a value back to the host, WaitEvent,
// SecondsBetween). Underneath it is the CPU backend, so results are the CPU's maths on the
// device path of the algorithms (HostReadsDeviceMemory() is false). Copies from the host take
// their data when called, as CUDA's from pageable memory do; CopyFromStagingAsync reads its
// source when it runs, so a host that rewrites staging memory before waiting for the copy's
// event sends the new contents, as it would on a GPU. Two queues, as a GPU's two streams: the
// work queue and the copy queue (CopyFromStagingAsync), ordered only by the waits asked for
// (CopiesWaitFor, WorkWaitsFor, as cudaStreamWaitEvent: on the event as it was recorded when
// asked). When the host waits, the queues run in one of two orders (Order): the copy queue as
// far as it can before the work queue, or after it -- a missing wait shows in one or the other
// as data copied over before it was read, or read before it was copied. Events are marks in a
// queue; the time between two is a millisecond per operation queued between them. A batch of
// small steps runs in reverse order (they must not depend on each other). Tests only: not
// thread-safe.
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/backend/backend.h"

namespace mavg::testing {

class QueuedBackend final : public Backend {
 public:
  enum class Order { kCopiesFirst, kWorkFirst };  // which queue runs first when both can
  explicit QueuedBackend(Order order = Order::kCopiesFirst)
      : cpu_(CreateBackend(BackendOptions{DeviceKind::kCpu, 0, 2, false})), order_(order) {}
  ~QueuedBackend() override { RunAll(); }

  // Operations queued and not yet run.
  size_t Pending() const { return queues_[kWork].ops.size() + queues_[kCopy].ops.size(); }

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
    Queue(kCopy, [staging, dst, bytes] {
      if (bytes > 0) std::memcpy(dst, staging, bytes);
    });
  }
  void CopiesWaitFor(void* event) override { QueueWait(kCopy, *static_cast<Event*>(event)); }
  void RecordCopiesEvent(void* event) override { Record(kCopy, static_cast<Event*>(event)); }
  void WorkWaitsFor(void* event) override { QueueWait(kWork, *static_cast<Event*>(event)); }
  void* CreateEvent() override { return new Event; }
  void DestroyEvent(void* event) override { delete static_cast<Event*>(event); }
  void RecordEvent(void* event) override { Record(kWork, static_cast<Event*>(event)); }
  void WaitEvent(void* event) override { RunUntil(*static_cast<Event*>(event)); }
  double SecondsBetween(void* start, void* end) override {
    const Event& a = *static_cast<Event*>(start);
    const Event& b = *static_cast<Event*>(end);
    if (a.queue != b.queue) throw std::logic_error("QueuedBackend: events of two queues timed");
    RunUntil(b);
    return static_cast<double>(b.mark - a.mark) * 1e-3;
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
  void AdamUpdate(const AdamScalars& s, ConstMatrixView g, MatrixView m, MatrixView v,
                  MatrixView p) override {
    Queue([=, this] { cpu_->AdamUpdate(s, g, m, v, p); });
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
  enum QueueId { kWork = 0, kCopy = 1 };
  struct Event {
    int queue = kWork;  // the queue it marks
    uint64_t mark = 0;  // operations queued there before it was recorded (0: never recorded)
  };
  struct Op {
    std::function<void()> run;  // empty: a wait for another queue
    Event wait;                 // a wait's: until its queue has run `mark` operations
  };
  struct OpQueue {
    std::deque<Op> ops;
    uint64_t queued = 0, done = 0;  // operations (not waits) queued and run so far
  };

  static std::shared_ptr<std::vector<char>> Snapshot(const void* src, size_t bytes) {
    auto data = std::make_shared<std::vector<char>>(bytes);
    if (bytes > 0) std::memcpy(data->data(), src, bytes);
    return data;
  }
  void Queue(std::function<void()> op) { Queue(kWork, std::move(op)); }
  void Queue(QueueId q, std::function<void()> op) {
    queues_[q].ops.push_back(Op{std::move(op), Event{}});
    ++queues_[q].queued;
  }
  void QueueWait(QueueId q, const Event& e) { queues_[q].ops.push_back(Op{nullptr, e}); }
  void Record(QueueId q, Event* e) { *e = Event{q, queues_[q].queued}; }
  // Runs the front of queue q if it can: false if it is empty or waits.
  bool Step(int q) {
    OpQueue& queue = queues_[q];
    if (queue.ops.empty()) return false;
    Op& front = queue.ops.front();
    if (!front.run) {
      if (queues_[front.wait.queue].done < front.wait.mark) return false;
      queue.ops.pop_front();
      return true;
    }
    std::function<void()> run = std::move(front.run);
    queue.ops.pop_front();
    ++queue.done;
    run();
    return true;
  }
  // Runs until the work an event marks is done, the preferred queue first whenever it can.
  void RunUntil(const Event& e) {
    const int first = order_ == Order::kCopiesFirst ? kCopy : kWork;
    while (queues_[e.queue].done < e.mark) {
      if (!Step(first) && !Step(1 - first)) {
        throw std::logic_error("QueuedBackend: the queues wait for each other");
      }
    }
  }
  void RunAll() {
    RunUntil(Event{kWork, queues_[kWork].queued});
    RunUntil(Event{kCopy, queues_[kCopy].queued});
    while (Step(kWork) || Step(kCopy)) {  // trailing waits
    }
  }

  std::unique_ptr<Backend> cpu_;  // owned: where the work runs
  Order order_;
  OpQueue queues_[2];  // [kWork], [kCopy]
  int batches_ = 0;
};

}  // namespace mavg::testing
