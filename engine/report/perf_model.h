#pragma once
// An alpha-beta performance model of periodic averaging: the time of one all-reduce of S bytes
// over N workers on a link of bandwidth B and latency a is, for a ring all-reduce,
//   T(S, N) = 2 (N-1) a + 2 (N-1)/N * S / B
// plus, with host staging (no GPU-aware MPI, as in the paper), a copy device->host and back
// over the host link: 2 S / B_host. An epoch on N workers is then
//   T_N = compute_N + R_N * T(S, N)
// with R_N averagings per epoch. Bandwidths are the links' nominal data rates per direction.

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
// An interconnect fitted to a measured all-reduce (the JSON `mavg bench allreduce` writes):
// the bus bandwidth it achieved, latency neglected.
Interconnect FitInterconnect(const std::string& bench_json_path);

struct AveragingCost {
  double allreduce_s = 0.0;  // on the network link
  double staging_s = 0.0;    // device <-> host copies (0 without staging)
  double Total() const { return allreduce_s + staging_s; }
};

AveragingCost AveragingTime(double bytes, int workers, const Interconnect& link,
                            const Interconnect* staging);

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
