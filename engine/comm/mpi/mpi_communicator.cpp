#include "engine/comm/mpi/mpi_communicator.h"

// C API only: OpenMPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>
#include <thread>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/logging.h"
#include "engine/core/timer.h"

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

// Rank-order or MPI-order sums over `comm`, with the scratch they need. Used from the main
// thread and, on a duplicate communicator, from a communication thread.
class Summer {
 public:
  Summer(MPI_Comm comm, bool deterministic) : comm_(comm), deterministic_(deterministic) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  template <typename T>
  void Sum(std::span<T> data, MPI_Datatype type) {
    if (size_ == 1 || data.empty()) return;
    if (!deterministic_) {
      for (size_t off = 0; off < data.size(); off += kMaxCount) {
        const int n = static_cast<int>(std::min(kMaxCount, data.size() - off));
        Check(MPI_Allreduce(MPI_IN_PLACE, data.data() + off, n, type, MPI_SUM, comm_),
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
                        recv_displs.data(), type, comm_),
          "MPI_Alltoallv");
    T* own = data.data() + displs[rank_];
    std::copy_n(recv, mine, own);
    for (int r = 1; r < size_; ++r) {
      const T* x = recv + static_cast<size_t>(r) * mine;
      for (int i = 0; i < mine; ++i) own[i] += x[i];
    }
    Check(MPI_Allgatherv(MPI_IN_PLACE, 0, type, data.data(), counts.data(), displs.data(), type,
                         comm_),
          "MPI_Allgatherv");
  }

 private:
  MPI_Comm comm_;  // not owned
  bool deterministic_;
  int rank_ = 0, size_ = 1;
  std::vector<char> recv_;  // scratch for the deterministic reduce-scatter
};

// A sum running on a communication thread; joined by Wait() or the destructor.
class ThreadSum final : public PendingSum {
 public:
  ThreadSum(Summer& summer, std::span<float> data) {
    thread_ = std::thread([this, &summer, data] {
      try {
        Timer t;
        summer.Sum(data, MPI_FLOAT);
        seconds_ = t.Seconds();
      } catch (...) {
        error_ = std::current_exception();
      }
    });
  }
  ~ThreadSum() override {
    if (thread_.joinable()) thread_.join();
  }
  void Wait() override {
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }
  double Seconds() const override { return seconds_; }

 private:
  std::thread thread_;
  double seconds_ = 0.0;
  std::exception_ptr error_;
};

class MpiCommunicator final : public Communicator {
 public:
  // The world communicator.
  MpiCommunicator(bool deterministic, bool background_sums) : deterministic_(deterministic) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      // Overlapped averaging sums on a second thread (on its own communicator).
      const int wanted = background_sums ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
      Check(MPI_Init_thread(nullptr, nullptr, wanted, &thread_level_), "MPI_Init_thread");
      std::atexit(FinalizeAtExit);
    } else {
      MPI_Query_thread(&thread_level_);
    }
    // Errors come back as codes (and become mavg::Error) instead of aborting inside MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    Attach(MPI_COMM_WORLD, false);
  }
  // A communicator made by Split (owned, freed with this object).
  MpiCommunicator(MPI_Comm comm, bool deterministic, int thread_level)
      : deterministic_(deterministic), thread_level_(thread_level) {
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    Attach(comm, true);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    background_.reset();
    if (background_comm_ != MPI_COMM_NULL) MPI_Comm_free(&background_comm_);
    if (owned_) MPI_Comm_free(&comm_);
  }

  int Rank() const override { return rank_; }
  int NodeRank() const override { return node_rank_; }
  int WorldSize() const override { return size_; }
  std::string Name() const override { return deterministic_ ? "mpi (deterministic)" : "mpi"; }

  void AllReduceSum(std::span<float> data) override { summer_->Sum(data, MPI_FLOAT); }
  void AllReduceSum(std::span<double> data) override { summer_->Sum(data, MPI_DOUBLE); }

  void AllReduceMax(std::span<double> data) override {
    for (size_t off = 0; off < data.size(); off += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, data.size() - off));
      Check(MPI_Allreduce(MPI_IN_PLACE, data.data() + off, n, MPI_DOUBLE, MPI_MAX, comm_),
            "MPI_Allreduce(MAX)");
    }
  }

  void Broadcast(std::span<float> data, int root) override {
    for (size_t off = 0; off < data.size(); off += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, data.size() - off));
      Check(MPI_Bcast(data.data() + off, n, MPI_FLOAT, root, comm_), "MPI_Bcast");
    }
  }

  void AllGather(std::span<std::byte> all) override {
    MAVG_CHECK(all.size() % static_cast<size_t>(size_) == 0, "all-gather of {} bytes over {} ranks",
               all.size(), size_);
    const size_t block = all.size() / static_cast<size_t>(size_);
    MAVG_CHECK(block <= static_cast<size_t>(std::numeric_limits<int>::max()),
               "all-gather: {} bytes per rank, more than one MPI call takes", block);
    Check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), static_cast<int>(block),
                        MPI_BYTE, comm_),
          "MPI_Allgather");
  }

  std::unique_ptr<PendingSum> StartAllReduceSum(std::span<float> data) override {
    if (thread_level_ < MPI_THREAD_MULTIPLE || size_ == 1) {
      if (size_ > 1 && !warned_synchronous_) {
        spdlog::warn("[comm] MPI provides no MPI_THREAD_MULTIPLE: overlapped sums run in turn");
        warned_synchronous_ = true;
      }
      return Communicator::StartAllReduceSum(data);  // synchronous: no thread support
    }
    if (background_comm_ == MPI_COMM_NULL) {  // collective: every rank's first start
      Check(MPI_Comm_dup(comm_, &background_comm_), "MPI_Comm_dup");
      background_ = std::make_unique<Summer>(background_comm_, deterministic_);
    }
    return std::make_unique<ThreadSum>(*background_, data);
  }

  std::unique_ptr<Communicator> Split(int color) override {
    MPI_Comm group = MPI_COMM_NULL;
    Check(MPI_Comm_split(comm_, color, rank_, &group), "MPI_Comm_split");
    return std::make_unique<MpiCommunicator>(group, deterministic_, thread_level_);
  }

  void Barrier() override { Check(MPI_Barrier(comm_), "MPI_Barrier"); }
  void Abort(int code) override { MPI_Abort(MPI_COMM_WORLD, code); }

 private:
  void Attach(MPI_Comm comm, bool owned) {
    comm_ = comm;
    owned_ = owned;
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    summer_ = std::make_unique<Summer>(comm_, deterministic_);
    MPI_Comm node = MPI_COMM_NULL;
    Check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    MPI_Comm_rank(node, &node_rank_);
    MPI_Comm_free(&node);
  }

  bool deterministic_;
  int thread_level_ = MPI_THREAD_SINGLE;  // what MPI_Init_thread provided
  MPI_Comm comm_ = MPI_COMM_NULL;         // owned when owned_ (a split)
  bool owned_ = false;
  bool warned_synchronous_ = false;
  int rank_ = 0, size_ = 1;
  int node_rank_ = 0;                         // among the ranks of comm_ on this machine
  std::unique_ptr<Summer> summer_;            // sums on comm_ (main thread)
  MPI_Comm background_comm_ = MPI_COMM_NULL;  // owned: a duplicate of comm_ for ThreadSum
  std::unique_ptr<Summer> background_;        // sums on background_comm_
};

}  // namespace

bool LaunchedUnderMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

std::unique_ptr<Communicator> CreateMpiCommunicator(bool deterministic, bool background_sums) {
  return std::make_unique<MpiCommunicator>(deterministic, background_sums);
}

}  // namespace mavg
