#include "engine/comm/thread_group.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "engine/core/error.h"

namespace mavg {
namespace {

// Shared state: every collective is a rendezvous in two phases. Ranks post pointers to their
// buffers; the last to arrive combines them in rank order into a shared result; everyone copies
// the result out, then the last to leave resets for the next collective.
class Group {
 public:
  explicit Group(int n) : n_(n), posted_(n, nullptr) {}

  template <typename T, typename Combine>
  void Collective(int rank, std::span<T> data, Combine combine) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return aborted_ || phase_ == 0; });
    CheckAborted();
    posted_[rank] = data.data();
    if (++arrived_ == n_) {
      result_.assign(data.size() * sizeof(T), 0);
      T* out = reinterpret_cast<T*>(result_.data());
      std::copy_n(static_cast<const T*>(posted_[0]), data.size(), out);
      for (int r = 1; r < n_; ++r) {
        const T* x = static_cast<const T*>(posted_[r]);
        for (size_t i = 0; i < data.size(); ++i) out[i] = combine(out[i], x[i]);
      }
      phase_ = 1;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return aborted_ || phase_ == 1; });
      CheckAborted();
    }
    std::copy_n(reinterpret_cast<const T*>(result_.data()), data.size(), data.data());
    if (++left_ == n_) {
      arrived_ = left_ = 0;
      phase_ = 0;
      cv_.notify_all();
    }
  }

  void Abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  void CheckAborted() { MAVG_CHECK(!aborted_, "thread group aborted by another rank"); }

  const int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<const void*> posted_;  // [rank] buffer of the current collective
  std::vector<char> result_;
  int arrived_ = 0, left_ = 0;
  int phase_ = 0;  // 0: collecting, 1: result ready
  bool aborted_ = false;
};

class ThreadGroupMember final : public Communicator {
 public:
  ThreadGroupMember(Group& group, int rank, int n) : group_(&group), rank_(rank), n_(n) {}
  int Rank() const override { return rank_; }
  int WorldSize() const override { return n_; }
  std::string Name() const override { return "threads"; }
  void AllReduceSum(std::span<float> d) override {
    group_->Collective(rank_, d, [](float a, float b) { return a + b; });
  }
  void AllReduceSum(std::span<double> d) override {
    group_->Collective(rank_, d, [](double a, double b) { return a + b; });
  }
  void AllReduceMax(std::span<double> d) override {
    group_->Collective(rank_, d, [](double a, double b) { return std::max(a, b); });
  }
  void Broadcast(std::span<float> d, int root) override {
    const int me = rank_;
    // Sum of (value if rank == root else 0) in rank order leaves the root's values exact.
    std::vector<float> tmp(d.begin(), d.end());
    if (me != root) std::fill(tmp.begin(), tmp.end(), 0.0f);
    group_->Collective(rank_, std::span<float>(tmp), [](float a, float b) { return a + b; });
    std::copy(tmp.begin(), tmp.end(), d.begin());
  }
  void AllGather(std::span<std::byte> all) override {
    // Every rank's copy holds zeros outside its own block, so an OR in rank order leaves each
    // block exactly as its rank wrote it.
    MAVG_CHECK(all.size() % static_cast<size_t>(n_) == 0, "all-gather of {} bytes over {} ranks",
               all.size(), n_);
    const size_t block = all.size() / static_cast<size_t>(n_);
    std::vector<std::byte> mine(all.size(), std::byte{0});
    std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(block * rank_), block,
                mine.begin() + static_cast<std::ptrdiff_t>(block * rank_));
    group_->Collective(rank_, std::span<std::byte>(mine),
                       [](std::byte a, std::byte b) { return a | b; });
    std::copy(mine.begin(), mine.end(), all.begin());
  }
  void Barrier() override {
    double x = 0;
    AllReduceMax(std::span<double>(&x, 1));
  }
  void Abort(int /*code*/) override { group_->Abort(); }

 private:
  Group* group_;  // [not null], not owned
  int rank_, n_;
};

}  // namespace

void RunThreadGroup(int world_size, const std::function<void(Communicator&)>& fn) {
  MAVG_CHECK(world_size > 0, "thread group needs at least one rank");
  Group group(world_size);
  std::mutex error_mu;
  std::exception_ptr first_error;  // the root cause: later ranks only see the abort
  std::vector<std::thread> threads;
  for (int r = 0; r < world_size; ++r) {
    threads.emplace_back([&, r] {
      ThreadGroupMember member(group, r, world_size);
      try {
        fn(member);
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(error_mu);
          if (!first_error) first_error = std::current_exception();
        }
        group.Abort();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace mavg
