#pragma once
// Subnormal floats flushed to zero on the threads that train.
//
// A unit that saturates (a sigmoid near 0 or 1, a softmax far from a class) passes back
// gradients around 1e-38 and below: subnormal floats. x86 cores compute with those through a
// microcode assist, and on Intel's AVX-512 cores an SGEMM whose operands are subnormal runs
// about 150 times slower than one on normal numbers (measured on a Xeon: 3.8 s against 0.02 s
// for the same 20 GEMMs); a diverging or collapsing run, whose units saturate, then trains 10 to
// 15 times slower than a healthy one of the same work, and its per-frame compute time (the basis
// of every projected speedup) measures the assist, not the model. The CPU backend therefore sets
// the FPU's flush-to-zero and denormals-are-zero modes (x86-64 MXCSR FTZ and DAZ; AArch64 FPCR
// FZ) on the thread that creates it and on every thread of its pool: a subnormal input
// reads as 0 and a subnormal result is written as 0.
// A value below 1.2e-38 contributes nothing measurable to a float32 sum of normal numbers, so
// training is unchanged wherever nothing is subnormal; where a value was, a sum it enters
// changes by less than its rounding (a diverging run's path may then differ). Threads started
// later inherit the mode from the thread that starts them (Linux copies the FPU control state
// at clone).

namespace mavg {

// Sets flush-to-zero and denormals-are-zero on the calling thread. False where this CPU
// architecture has no such mode known to mavg (nothing changed).
bool FlushSubnormalsOnThisThread();

// Whether the calling thread flushes subnormal results and inputs to zero.
bool SubnormalsFlushedOnThisThread();

}  // namespace mavg
