#include "tests/testing/test_util.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

namespace mavg::testing {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = (std::filesystem::temp_directory_path() /
           ("mavg-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
              .string();
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace mavg::testing
