#include "engine/comm/communicator.h"

namespace mavg {
namespace {

class LocalCommunicator final : public Communicator {
 public:
  int Rank() const override { return 0; }
  int WorldSize() const override { return 1; }
  std::string Name() const override { return "local"; }
  void AllReduceSum(std::span<float> /*data*/) override {}
  void AllReduceSum(std::span<double> /*data*/) override {}
  void AllReduceMax(std::span<double> /*data*/) override {}
  void Broadcast(std::span<float> /*data*/, int /*root*/) override {}
  void Barrier() override {}
  void Abort(int /*code*/) override {}
};

}  // namespace

std::unique_ptr<Communicator> CreateLocalCommunicator() {
  return std::make_unique<LocalCommunicator>();
}

}  // namespace mavg
