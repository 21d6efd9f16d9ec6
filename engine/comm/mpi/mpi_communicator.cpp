#include "engine/comm/mpi/mpi_communicator.h"

// C API only: OpenMPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

#include "engine/core/error.h"

namespace mavg {
namespace {

void Check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  MAVG_FAIL("{} failed: {}", what, std::string(text, len));
}

// MPI counts are int: large buffers go in pieces.
constexpr size_t kMaxCount = size_t{1} << 30;

void FinalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(bool deterministic) : deterministic_(deterministic) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      std::atexit(FinalizeAtExit);
    }
    // Errors come back as codes (and become mavg::Error) instead of aborting inside MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  int Rank() const override { return rank_; }
  int WorldSize() const override { return size_; }
  std::string Name() const override { return deterministic_ ? "mpi (deterministic)" : "mpi"; }

  void AllReduceSum(std::span<float> data) override { Sum(data, MPI_FLOAT); }
  void AllReduceSum(std::span<double> data) override { Sum(data, MPI_DOUBLE); }

  void AllReduceMax(std::span<double> data) override {
    for (size_t off = 0; off < data.size(); off += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, data.size() - off));
      Check(MPI_Allreduce(MPI_IN_PLACE, data.data() + off, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
            "MPI_Allreduce(MAX)");
    }
  }

  void Broadcast(std::span<float> data, int root) override {
    for (size_t off = 0; off < data.size(); off += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, data.size() - off));
      Check(MPI_Bcast(data.data() + off, n, MPI_FLOAT, root, MPI_COMM_WORLD), "MPI_Bcast");
    }
  }

  void Barrier() override { Check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }
  void Abort(int code) override { MPI_Abort(MPI_COMM_WORLD, code); }

 private:
  template <typename T>
  void Sum(std::span<T> data, MPI_Datatype type) {
    if (size_ == 1 || data.empty()) return;
    if (!deterministic_) {
      for (size_t off = 0; off < data.size(); off += kMaxCount) {
        const int n = static_cast<int>(std::min(kMaxCount, data.size() - off));
        Check(MPI_Allreduce(MPI_IN_PLACE, data.data() + off, n, type, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce(SUM)");
      }
      return;
    }
    // Deterministic: rank r owns chunk r. Every rank sends chunk r to rank r (all-to-all);
    // the owner adds the N contributions in rank order; then everyone gathers all chunks.
    const size_t n = data.size();
    const size_t chunk = (n + size_ - 1) / size_;
    MAVG_CHECK(n <= static_cast<size_t>(std::numeric_limits<int>::max()),
               "deterministic all-reduce of {} elements is too large (MPI counts are int)", n);
    std::vector<int> counts(size_), displs(size_);
    for (int r = 0; r < size_; ++r) {
      const size_t begin = std::min(n, r * chunk);
      counts[r] = static_cast<int>(std::min(n, begin + chunk) - begin);
      displs[r] = static_cast<int>(begin);
    }
    const int mine = counts[rank_];
    recv_.resize(static_cast<size_t>(mine) * size_ * sizeof(T));
    T* recv = reinterpret_cast<T*>(recv_.data());
    std::vector<int> recv_counts(size_, mine), recv_displs(size_);
    for (int r = 0; r < size_; ++r) recv_displs[r] = r * mine;
    Check(MPI_Alltoallv(data.data(), counts.data(), displs.data(), type, recv, recv_counts.data(),
                        recv_displs.data(), type, MPI_COMM_WORLD),
          "MPI_Alltoallv");
    T* own = data.data() + displs[rank_];
    std::copy_n(recv, mine, own);
    for (int r = 1; r < size_; ++r) {
      const T* x = recv + static_cast<size_t>(r) * mine;
      for (int i = 0; i < mine; ++i) own[i] += x[i];
    }
    Check(MPI_Allgatherv(MPI_IN_PLACE, 0, type, data.data(), counts.data(), displs.data(), type,
                         MPI_COMM_WORLD),
          "MPI_Allgatherv");
  }

  bool deterministic_;
  int rank_ = 0, size_ = 1;
  std::vector<char> recv_;  // scratch for the deterministic reduce-scatter
};

}  // namespace

bool LaunchedUnderMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

std::unique_ptr<Communicator> CreateMpiCommunicator(bool deterministic) {
  return std::make_unique<MpiCommunicator>(deterministic);
}

}  // namespace mavg
