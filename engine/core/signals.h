#pragma once
// Stop requests from the outside: SIGTERM, SIGUSR1 (e.g. SLURM's --signal=USR1@T before a
// preemption) and SIGINT (Ctrl-C) set a flag that the training loop checks at its next safe
// point (an averaging point), where it checkpoints and exits with status "preempted"; RBM
// pretraining checks it at every CD-1 step, and a run waiting for another's stack twice a
// second (nothing to checkpoint there). A second SIGINT ends the process at once.

namespace mavg {

void InstallStopSignalHandlers();
// The signal number that requested a stop, or 0.
int StopSignal();
inline bool StopRequested() { return StopSignal() != 0; }
// For tests.
void ClearStopRequest();
void RequestStopForTesting(int signal);

}  // namespace mavg
