#pragma once
// One fuzz target per *_fuzz.cpp, written once for two drivers:
//   - libFuzzer (Clang, -DMAVG_FUZZ=ON): each target is its own executable, fuzz_<name>, whose
//     LLVMFuzzerTestOneInput calls the body; scripts/fuzz.sh runs them.
//   - the replay tool (every build): all targets in one executable, fuzz_tool, which writes the
//     seed corpora and replays seeds and tests/fuzz/regressions/<name>/ once each (ctest).
//
//   MAVG_FUZZ_TARGET(kaldi_matrix_ark) { ... use data, size ...; }
//
// A body feeds the bytes to a reader inside ExpectCleanFailure: a reader may accept the input or
// throw mavg::Error with one readable line; anything else (another exception, a message with a
// newline, a sanitizer report, an allocation over libFuzzer's limit) is a finding.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"

namespace mavg::fuzz {

using TargetFn = void (*)(const uint8_t* data, size_t size);
bool Register(const char* name, TargetFn fn);  // replay tool only (fuzz_tool.cpp)

[[noreturn]] inline void Finding(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fuzz finding: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// The messages of the inputs rejected so far in this process (fuzz_tool reports them for seeds,
// which should be accepted).
inline std::vector<std::string>& Rejections() {
  static std::vector<std::string> r;
  return r;
}

template <class Fn>
void ExpectCleanFailure(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    const std::string_view msg = e.what();
#ifndef MAVG_LIBFUZZER
    Rejections().emplace_back(msg);
#endif
    if (msg.empty()) Finding("mavg::Error without a message", "");
    if (msg.find('\n') != std::string_view::npos) Finding("a multi-line error", msg);
  } catch (const std::exception& e) {
    Finding("an exception other than mavg::Error escaped", e.what());
  }
}

// A private directory for the files a reader needs, made once per process and removed at exit.
const std::string& WorkDir();
// Writes `bytes` to WorkDir()/name and returns the path.
std::string WriteWorkFile(const std::string& name, std::string_view bytes);

// Several files in one input (as libFuzzer's FuzzedDataProvider splits strings): each file but
// the last ends at a backslash followed by anything but a backslash, and a doubled backslash is
// one backslash; the last file is the rest. EncodeFiles is the inverse, for seeds.
std::vector<std::string> SplitFiles(const uint8_t* data, size_t size, size_t count);
std::string EncodeFiles(const std::vector<std::string>& files);

}  // namespace mavg::fuzz

#define MAVG_FUZZ_CAT2(a, b) a##b
#define MAVG_FUZZ_CAT(a, b) MAVG_FUZZ_CAT2(a, b)
#ifdef MAVG_LIBFUZZER
#define MAVG_FUZZ_TARGET(name)                                                  \
  static void MAVG_FUZZ_CAT(FuzzBody_, name)(const uint8_t* data, size_t size); \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {     \
    MAVG_FUZZ_CAT(FuzzBody_, name)(data, size);                                 \
    return 0;                                                                   \
  }                                                                             \
  static void MAVG_FUZZ_CAT(FuzzBody_, name)(const uint8_t* data, size_t size)
#else
#define MAVG_FUZZ_TARGET(name)                                                  \
  static void MAVG_FUZZ_CAT(FuzzBody_, name)(const uint8_t* data, size_t size); \
  [[maybe_unused]] static const bool MAVG_FUZZ_CAT(kRegistered_, name) =        \
      ::mavg::fuzz::Register(#name, MAVG_FUZZ_CAT(FuzzBody_, name));            \
  static void MAVG_FUZZ_CAT(FuzzBody_, name)(const uint8_t* data, size_t size)
#endif
