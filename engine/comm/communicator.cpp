#include "engine/comm/communicator.h"

#include "engine/core/error.h"
#include "engine/core/timer.h"

namespace mavg {
namespace {

class DoneSum final : public PendingSum {
 public:
  explicit DoneSum(double seconds) : seconds_(seconds) {}
  void Wait() override {}
  double Seconds() const override { return seconds_; }

 private:
  double seconds_;
};

class LocalCommunicator final : public Communicator {
 public:
  int Rank() const override { return 0; }
  int WorldSize() const override { return 1; }
  std::string Name() const override { return "local"; }
  void AllReduceSum(std::span<float> /*data*/) override {}
  void AllReduceSum(std::span<double> /*data*/) override {}
  void AllReduceMax(std::span<double> /*data*/) override {}
  void Broadcast(std::span<float> /*data*/, int /*root*/) override {}
  void AllGather(std::span<std::byte> /*all*/) override {}
  void Barrier() override {}
  void Abort(int /*code*/) override {}
  std::unique_ptr<Communicator> Split(int /*color*/) override {
    return std::make_unique<LocalCommunicator>();
  }
};

}  // namespace

std::unique_ptr<PendingSum> Communicator::StartAllReduceSum(std::span<float> data) {
  Timer t;
  AllReduceSum(data);
  return std::make_unique<DoneSum>(t.Seconds());
}

std::unique_ptr<Communicator> Communicator::Split(int /*color*/) {
  MAVG_FAIL("the {} communicator cannot be split into groups", Name());
}

std::unique_ptr<Communicator> CreateLocalCommunicator() {
  return std::make_unique<LocalCommunicator>();
}

}  // namespace mavg
