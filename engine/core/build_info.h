#pragma once
// Facts about this build, generated at build time (cmake/BuildInfo.cmake).

namespace mavg::build_info {
extern const char* const kGitCommit;    // short commit, "-dirty" if the tree had changes
extern const char* const kCodeVersion;  // hash of engine/ sources: runs are stale when it changes
// Hash of the sources a pretrained stack depends on (pretrain/, backend/, data/, nn/, core/rng):
// part of the stack cache key.
extern const char* const kPretrainCodeVersion;
extern const char* const kBuildType;
extern const char* const kCompiler;
extern const bool kWithCuda;
}  // namespace mavg::build_info
