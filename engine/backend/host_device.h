#pragma once
// MAVG_HOST_DEVICE marks a function compiled for the host and, under nvcc, for CUDA devices too.
// The CUDA backend writes each kernel's per-element or per-row body as such a function in a
// plain header (backend/cuda/*.cuh, free of CUDA headers), so that the ordinary unit tests run
// the same bodies on the host against the CPU backend.

#if defined(__CUDACC__)
#define MAVG_HOST_DEVICE __host__ __device__
#else
#define MAVG_HOST_DEVICE
#endif
