#pragma once
// An alpha-beta performance model of periodic averaging: the time of one all-reduce of S bytes
// over N workers on a link of bandwidth B and latency a is, for a ring all-reduce,
//   T(S, N) = 2 (N-1) a + 2 (N-1)/N * S / B
// plus, with host staging (no GPU-aware MPI, as in the paper), a copy device->host and back
// over the host link: 2 S / B_host. Compressed outer deltas (parallel.compress) are
// all-gathered instead, each worker's S_c bytes to every other, on a ring:
//   T_ag(S_c, N) = (N-1) a + (N-1) S_c / B
// with the staging of the uncompressed parameters. An epoch on N workers is then
//   T_N = compute_N + R_N * T(S, N)
// with R_N averagings per epoch. Bandwidths are the links' nominal data rates per direction.
// Two-level runs (groups of g workers every K minibatches, all N every K2) price the group
// combines on an intra-node link and the global ones on the inter-node link; overlapped runs
// count only the communication a block's compute does not hide. docs/performance-model.md
// derives every formula.

#include <cstdint>
#include <string>
#include <vector>

namespace mavg {

struct Interconnect {
  std::string name;  // preset key, e.g. "ib-fdr"
  std::string description;
  double bandwidth = 0.0;  // bytes/s per direction
  double latency = 0.0;    // seconds per message
  std::string source;      // where the numbers come from
};

const std::vector<Interconnect>& InterconnectPresets();
// A preset by name; throws listing the valid names.
const Interconnect& FindInterconnect(const std::string& name);
// A preset by name, or a link given by its rate and latency as tc writes them:
// "RATE[@LATENCY]", RATE a number with kbit, mbit or gbit (per second, per direction), LATENCY
// with us, ms or s (default 0), e.g. "100mbit@2ms" (a shaped veth link: scripts/bench/link.sh).
// Throws one line naming the spec.
Interconnect ParseInterconnect(const std::string& spec);
// An interconnect fitted to a measured all-reduce (the JSON `mavg bench allreduce` writes):
// the bus bandwidth it achieved, latency neglected.
Interconnect FitInterconnect(const std::string& bench_json_path);

struct AveragingCost {
  double allreduce_s = 0.0;  // on the network link
  double staging_s = 0.0;    // device <-> host copies (0 without staging)
  double Total() const { return allreduce_s + staging_s; }
};

// How a combine's bytes travel: summed (all-reduce), or every worker's to every worker
// (all-gather: compressed deltas).
enum class Collective { kAllReduce, kAllGather };

// One combine of `bytes` per worker; staging copies `staged_bytes` (< 0: `bytes`) each way.
AveragingCost AveragingTime(double bytes, int workers, const Interconnect& link,
                            const Interconnect* staging,
                            Collective collective = Collective::kAllReduce,
                            double staged_bytes = -1.0);

// How one run combines its workers in one epoch, as the model sees it.
struct EpochShape {
  int workers = 1;     // N
  double bytes = 0.0;  // S: what a worker sends per combine (parameters x 4, fp32)
  Collective collective = Collective::kAllReduce;  // all-gather: compressed deltas
  double staged_bytes = -1.0;                      // host staging per combine each way (< 0: bytes)
  double compute_s = 0.0;            // one epoch's training time without communication
  double combines = 0.0;             // R: combine points per epoch (every K minibatches)
  int64_t group_size = 0;            // g: 0 (or >= N) = flat, everyone in one group
  int64_t average_every = 0;         // K
  int64_t average_every_global = 0;  // K2: 0 (or K) = flat
  double global_combines = -1.0;     // R_global as the run recorded it; < 0: ceil(R K / K2)
  bool overlap = false;              // the global all-reduce of block t runs during block t+1
  // Streaming (parallel.stream): F fragments, each exchange overlapped with tau local steps of
  // the `steps` a worker takes per epoch; the epoch's last F exchanges are synchronous.
  int64_t stream_fragments = 1;
  int64_t overlap_steps = 0;
  double steps = 0.0;
};

// The links the model prices combines on. `inter` carries flat and global combines (N
// workers), `intra` the group combines of two-level runs (g workers); staging, when set, is
// added to every combine.
struct ModelLinks {
  const Interconnect* intra = nullptr;    // [not null], not owned
  const Interconnect* inter = nullptr;    // [not null], not owned
  const Interconnect* staging = nullptr;  // [nullable], not owned
};

struct EpochModel {
  double compute_s = 0.0;
  double group_combines = 0.0, global_combines = 0.0;  // per epoch
  double group_s = 0.0;                                // all group combines (never overlapped)
  double global_s = 0.0;   // all global (or flat) combines, before any overlap
  double exposed_s = 0.0;  // the part of global_s that is not hidden behind compute
  double Total() const { return compute_s + group_s + exposed_s; }
};

// True for a two-level run: 1 <= g < N and K < K2.
bool IsTwoLevel(const EpochShape& shape);
// The modelled epoch: flat runs pay R T_global, T_global = T_ar(S, N, inter) + staging;
// two-level runs pay R_group T_group + R_global T_global, T_group = T_ar(S, g, intra) +
// staging, R_global = ceil(R K / K2) (every (K2/K)-th combine point and the epoch's last),
// R_group = R - R_global. Overlap (the trainer combines the epoch's last block synchronously)
// exposes (R_global - 1) max(0, T_global - compute / R_global) + T_global instead. A streamed
// run with tau > 0 exposes (R - F) max(0, T - tau compute / steps) + F T, T priced at the mean
// bytes of an exchange (the epoch's end exchanges all F fragments synchronously).
EpochModel ModelEpoch(const EpochShape& shape, const ModelLinks& links);

// The paper's setup projected with the model, beside its time.dat (see docs).
struct PaperProjectionOptions {
  double params = 39928422;                  // 440-6x2048-8806
  double frames = 300.0 * 3600 * 100 * 0.9;  // 300 h at 100 frames/s, 90% for training
  int minibatch = 1024;
  int average_every = 10;
  double t1 = 254.5;          // the paper's 1-GPU train time (time.dat)
  double time_unit_s = 60.0;  // assumption: time.dat is in minutes
  std::string link = "ib-fdr";
  std::string staging = "pcie2-x16";
  std::vector<int> workers = {1, 2, 4, 8, 16, 32};
};
// A Markdown report: the model's epoch time, communication time and speedup per worker
// count beside the paper's, with the assumptions.
std::string PaperProjection(const PaperProjectionOptions& options,
                            const std::string& reference_yaml);

}  // namespace mavg
