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
  // `piece`: where every rank shares this node's memory (`one_node`), a sum of more elements
  // than this goes in rank order, in pieces of this many, pipelined, deterministic or not
  // (0: never). Measured with 2 ranks on one machine it moved 160 MB at 2.3 x the bus bandwidth
  // of MPI_Allreduce; over a 1 Gbit/s TCP link at 0.85 x of it, hence one node only
  // (README, Benchmarks).
  Summer(MPI_Comm comm, bool deterministic, size_t piece, bool one_node)
      : comm_(comm), deterministic_(deterministic), piece_(one_node ? piece : 0) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  template <typename T>
  void Sum(std::span<T> data, MPI_Datatype type) {
    if (size_ == 1 || data.empty()) return;
    const bool pipelined = piece_ > 0 && data.size() > piece_;
    if (!deterministic_ && !pipelined) {
      for (size_t off = 0; off < data.size(); off += kMaxCount) {
        const int n = static_cast<int>(std::min(kMaxCount, data.size() - off));
        Check(MPI_Allreduce(MPI_IN_PLACE, data.data() + off, n, type, MPI_SUM, comm_),
              "MPI_Allreduce(SUM)");
      }
      return;
    }
    MAVG_CHECK(data.size() <= static_cast<size_t>(std::numeric_limits<int>::max()),
               "deterministic all-reduce of {} elements is too large (MPI counts are int)",
               data.size());
    SumInRankOrder(data, type, pipelined ? piece_ : data.size());
  }

 private:
  // Rank r owns [displs[r], displs[r] + counts[r]) of a span; it receives every rank's copy of
  // that chunk, rank q's at q * mine.
  struct Layout {
    std::vector<int> counts, displs, recv_counts, recv_displs;
    int mine = 0;
  };

  Layout Split(size_t n) const {
    Layout l;
    const size_t chunk = (n + size_ - 1) / size_;
    l.counts.resize(size_), l.displs.resize(size_);
    for (int r = 0; r < size_; ++r) {
      const size_t begin = std::min(n, r * chunk);
      l.counts[r] = static_cast<int>(std::min(n, begin + chunk) - begin);
      l.displs[r] = static_cast<int>(begin);
    }
    l.mine = l.counts[rank_];
    l.recv_counts.assign(size_, l.mine);
    l.recv_displs.resize(size_);
    for (int r = 0; r < size_; ++r) l.recv_displs[r] = r * l.mine;
    return l;
  }

  // own = the N received copies of the chunk added in rank order.
  template <typename T>
  static void AddInRankOrder(const T* recv, int mine, int ranks, T* own) {
    std::copy_n(recv, mine, own);
    for (int r = 1; r < ranks; ++r) {
      const T* x = recv + static_cast<size_t>(r) * mine;
      for (int i = 0; i < mine; ++i) own[i] += x[i];
    }
  }

  // Every element the sum of its N contributions in rank order, piece by piece: in each piece
  // rank r owns chunk r, every rank sends chunk r to rank r (all-to-all), the owner adds the N
  // copies in rank order, then everyone gathers all chunks. Piece k's all-to-all is in flight
  // while piece k - 1 is added up and its all-gather started (non-blocking collectives, started
  // in the same order on every rank): the same bits whatever the pieces (one piece: the whole
  // span).
  template <typename T>
  void SumInRankOrder(std::span<T> data, MPI_Datatype type, size_t piece) {
    const size_t n = data.size();
    const size_t pieces = (n + piece - 1) / piece;
    std::vector<Layout> layouts(pieces);  // alive until their collectives complete
    std::vector<MPI_Request> gathers(pieces, MPI_REQUEST_NULL);
    MPI_Request scatters[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    const size_t most = (piece + size_ - 1) / size_;  // the largest chunk a rank owns
    for (size_t b = 0; b < std::min<size_t>(pieces, 2); ++b)
      pipe_[b].resize(most * size_ * sizeof(T));
    const auto recv_of = [&](size_t k) { return reinterpret_cast<T*>(pipe_[k % 2].data()); };
    const auto start = [&](size_t k) {
      const size_t off = k * piece;
      const Layout& l = layouts[k] = Split(std::min(piece, n - off));
      Check(
          MPI_Ialltoallv(data.data() + off, l.counts.data(), l.displs.data(), type, recv_of(k),
                         l.recv_counts.data(), l.recv_displs.data(), type, comm_, &scatters[k % 2]),
          "MPI_Ialltoallv");
    };
    const auto finish = [&](size_t k) {
      Check(MPI_Wait(&scatters[k % 2], MPI_STATUS_IGNORE), "MPI_Wait(Ialltoallv)");
      const Layout& l = layouts[k];
      T* part = data.data() + k * piece;
      AddInRankOrder(recv_of(k), l.mine, size_, part + l.displs[rank_]);
      Check(MPI_Iallgatherv(MPI_IN_PLACE, 0, type, part, l.counts.data(), l.displs.data(), type,
                            comm_, &gathers[k]),
            "MPI_Iallgatherv");
    };
    for (size_t k = 0; k < pieces; ++k) {
      start(k);
      if (k > 0) finish(k - 1);
    }
    finish(pieces - 1);
    Check(MPI_Waitall(static_cast<int>(pieces), gathers.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall(Iallgatherv)");
  }

  MPI_Comm comm_;  // not owned
  bool deterministic_;
  size_t piece_;
  int rank_ = 0, size_ = 1;
  std::vector<char> pipe_[2];  // scratch of the rank-order sum: two pieces in turn
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
  MpiCommunicator(bool deterministic, bool background_sums, size_t piece)
      : deterministic_(deterministic), piece_(piece) {
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
  MpiCommunicator(MPI_Comm comm, bool deterministic, int thread_level, size_t piece)
      : deterministic_(deterministic), piece_(piece), thread_level_(thread_level) {
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
      background_ = std::make_unique<Summer>(background_comm_, deterministic_, piece_, one_node_);
    }
    return std::make_unique<ThreadSum>(*background_, data);
  }

  std::unique_ptr<Communicator> Split(int color) override {
    MPI_Comm group = MPI_COMM_NULL;
    Check(MPI_Comm_split(comm_, color, rank_, &group), "MPI_Comm_split");
    return std::make_unique<MpiCommunicator>(group, deterministic_, thread_level_, piece_);
  }

  void Barrier() override { Check(MPI_Barrier(comm_), "MPI_Barrier"); }
  void Abort(int code) override { MPI_Abort(MPI_COMM_WORLD, code); }

 private:
  void Attach(MPI_Comm comm, bool owned) {
    comm_ = comm;
    owned_ = owned;
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm node = MPI_COMM_NULL;
    Check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    MPI_Comm_rank(node, &node_rank_);
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    // One node for every rank, or not: the same answer on every rank, so they all sum alike.
    int local = node_size == size_ ? 1 : 0;
    Check(MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce(MIN)");
    one_node_ = local == 1;
    summer_ = std::make_unique<Summer>(comm_, deterministic_, piece_, one_node_);
  }

  bool deterministic_;
  size_t piece_;                          // pipelined rank-order sums: elements per piece
  int thread_level_ = MPI_THREAD_SINGLE;  // what MPI_Init_thread provided
  MPI_Comm comm_ = MPI_COMM_NULL;         // owned when owned_ (a split)
  bool owned_ = false;
  bool warned_synchronous_ = false;
  int rank_ = 0, size_ = 1;
  int node_rank_ = 0;                         // among the ranks of comm_ on this machine
  bool one_node_ = false;                     // every rank of comm_ on this machine
  std::unique_ptr<Summer> summer_;            // sums on comm_ (main thread)
  MPI_Comm background_comm_ = MPI_COMM_NULL;  // owned: a duplicate of comm_ for ThreadSum
  std::unique_ptr<Summer> background_;        // sums on background_comm_
};

}  // namespace

bool LaunchedUnderMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

std::unique_ptr<Communicator> CreateMpiCommunicator(bool deterministic, bool background_sums,
                                                    int64_t piece) {
  MAVG_CHECK(piece >= 0, "an all-reduce in pieces of {} elements", piece);
  return std::make_unique<MpiCommunicator>(deterministic, background_sums,
                                           static_cast<size_t>(piece));
}

}  // namespace mavg
