#include "engine/train/device_choice.h"

namespace mavg {

BackendOptions RunBackendOptions(const RunConfig& config, int node_rank) {
  BackendOptions bo;
  bo.kind = config.device == Device::kCuda ? DeviceKind::kCuda : DeviceKind::kCpu;
  bo.device_index = static_cast<int>(config.device_index);
  bo.threads = static_cast<int>(config.device_options.threads);
  bo.tf32 = config.device_options.tf32;
  const int visible = bo.kind == DeviceKind::kCuda ? CudaDeviceCount() : 0;
  if (visible > 0 && config.parallel.mode == ParallelMode::kMpi) {
    bo.device_index = (bo.device_index + node_rank) % visible;
  }
  return bo;
}

}  // namespace mavg
