#pragma once
// Where the workers of one process take their minibatch steps: one lane per worker stepping at
// once. Simulated workers on a CPU step concurrently between two combines, each on a thread of
// its own with single-threaded GEMMs (small GEMMs scale poorly across threads, and the workers
// are independent until they combine); everywhere else there is one lane and the workers step
// one after another, each using every thread of the backend.
//
// A lane holds what a step writes besides the worker's own state: a network (activations,
// gradients; the lane binds the worker's parameters into it) and the minibatch buffers. The
// worker's parameters, optimizer, reader and statistics are its own, and each step is the same
// float operations whatever lane runs it or what runs beside it, so the models are bit for bit
// those of the workers stepping one after another (and of N MPI ranks).
//
// On a backend that runs asynchronously (a GPU) a lane's input is double-buffered: while the
// device steps on one minibatch, the host reads the next one the lane will step on into
// page-locked staging and queues its copy into a second pair of buffers (Prefetch), which the
// next step swaps in (Take). The minibatches and their order are those of reading each when it
// is stepped; only when the host reads them changes. The steps' device times come from events
// (StepClock), so no step waits for the device.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "engine/backend/device_buffer.h"
#include "engine/core/thread_pool.h"
#include "engine/nn/network.h"

namespace mavg {

// Reads one minibatch of a stream (a worker's reader) into x [n x input] and labels [n];
// returns n, 0 at the end of the stream.
using MinibatchSource = std::function<int64_t(std::vector<float>& x, std::vector<int32_t>& labels)>;

// Whether lanes' input is double-buffered: where the backend runs asynchronously, or as told.
enum class InputBuffering { kAuto, kSingle, kDouble };

// The minibatch read ahead of its step, and the buffers it is copied into.
struct LanePrefetch {
  explicit LanePrefetch(Backend& backend)
      : staged_x(backend), staged_labels(backend), copied(backend), released(backend) {}
  ~LanePrefetch() {
    try {
      copied.Wait();  // no copy may still read the staging memory freed next
    } catch (...) {   // a device in error: nothing more to wait for
    }
  }
  LanePrefetch(const LanePrefetch&) = delete;
  LanePrefetch& operator=(const LanePrefetch&) = delete;
  Matrix x;                             // [minibatch x input] device
  DeviceBuffer<int32_t> labels;         // [minibatch] device
  HostStaging staged_x, staged_labels;  // page-locked: read by the copies after they return
  BackendEvent copied;           // on the copy queue, after the copies from staging into x, labels
  BackendEvent released;         // on the work queue, after the last work that read x, labels
  const void* stream = nullptr;  // whose minibatch it holds; nullptr: none
  int64_t index = 0, rows = 0;   // which minibatch of the stream, its rows (0: ended)
  double io_s = 0.0;             // host time reading and staging it
};

// The times of a lane's steps without waiting for the device at each: the host's time reading
// and staging the step's minibatch (io) and the device's time for the step's work (compute,
// between two events). On the CPU an event is the host clock, so compute is the time the step's
// calls took, as a timer around them measures it.
class StepClock {
 public:
  struct Times {
    int worker = 0;           // whose step
    double io_s = 0.0;        // reading and staging its minibatch (host)
    double compute_s = 0.0;   // its work (device)
    bool prefetched = false;  // its minibatch was read while the step before it ran
  };
  StepClock() = default;
  explicit StepClock(Backend& backend) : backend_(&backend) {}
  // Around the work of one step.
  void Start();
  void Stop(int worker, double io_s, bool prefetched);
  // fn(times) for the stopped steps, oldest first, all but the newest `keep` (waiting for the
  // device where it has not finished them).
  void Collect(size_t keep, const std::function<void(const Times&)>& fn);
  size_t Pending() const { return pending_.size(); }

 private:
  struct Mark {
    BackendEvent start, end;
    Times times;
  };
  Backend* backend_ = nullptr;  // not owned
  std::deque<Mark> pending_;    // started, oldest first
  std::vector<Mark> spare_;     // collected: their events are reused
};

struct StepLane {
  Backend* backend = nullptr;      // [not null], not owned
  Network* net = nullptr;          // [not null] lane 0: the model's network; else owned_net
  std::unique_ptr<Network> owned;  // lanes > 0: a network of the model's shape
  Matrix x;                        // [minibatch x input] the inputs of the minibatch stepped
  DeviceBuffer<int32_t> labels;    // [minibatch]
  std::vector<float> host_x;       // the source's output (host)
  std::vector<int32_t> host_labels;
  std::unique_ptr<LanePrefetch> prefetch;  // [double-buffered only]
  double io_s = 0.0;        // the current minibatch's host time reading and staging it
  bool prefetched = false;  // whether Prefetch read the current minibatch
  StepClock clock;          // the times of the steps taken on this lane

  // Makes minibatch `index` of `stream` the current one (x, labels; rows from 0), reading it
  // from `read` now unless Prefetch did; returns its rows (0: the stream ended). A prefetched
  // minibatch that is not the one asked for is an error (it would be lost). With rows, starts
  // the step on `clock` (the caller stops it after the step's work) and makes the work queued
  // from now on wait, on the device, for a prefetched minibatch's copy: a step waiting for its
  // input counts that wait in its time.
  int64_t Take(const void* stream, int64_t index, const MinibatchSource& read);
  // Double-buffered: reads minibatch `index` of `stream`, which the next Take must ask for, and
  // queues its copy to the device on the copy queue, which overlaps the work queued before (it
  // waits only for the step that last read the buffer it fills). Otherwise nothing (the next
  // Take reads it).
  void Prefetch(const void* stream, int64_t index, const MinibatchSource& read);
  // Forgets a prefetched minibatch (a new epoch reads new streams).
  void DropPrefetched() {
    if (prefetch) prefetch->stream = nullptr;
  }
};

// How many workers step at once: `concurrent` (device_options.concurrent_workers; 0: as many as
// there are `threads`), never more than the `workers` of this process; 1 for a GPU backend,
// whose replicas share one stream, and for one worker.
int StepLaneCount(bool cpu, int workers, int threads, int concurrent);

class StepLanes {
 public:
  // Lane 0 steps on `model` (not owned; must outlive this); the others on networks of its shape.
  StepLanes(Backend& backend, Network& model, int lanes, int64_t minibatch,
            InputBuffering buffering = InputBuffering::kAuto);
  int Count() const { return static_cast<int>(lanes_.size()); }
  StepLane& Lane(int i) { return lanes_[i]; }
  // The lanes' networks take the model's bias learning-rate coefficients (after it was
  // initialised or loaded); their parameters are always a worker's, bound per step.
  void SyncFromModel();
  // fn(i, lane) for i in [0, n): one lane per thread, each i on exactly one lane, in any order
  // across lanes (a lane's items in increasing order). With one lane, in order on this thread.
  // The first exception thrown is rethrown here after every thread has stopped.
  void ForEach(int n, const std::function<void(int, StepLane&)>& fn);

 private:
  Network& model_;  // not owned
  std::vector<StepLane> lanes_;
  std::unique_ptr<ThreadPool> pool_;  // [one thread per lane] with more than one lane
};

}  // namespace mavg
