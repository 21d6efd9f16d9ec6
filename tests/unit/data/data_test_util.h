#pragma once
// Helpers for the data tests: a per-test temporary directory, raw file I/O, and builders for
// Kaldi binary objects written byte by byte from Kaldi's documented layout (so the readers are
// checked against the format, not against our own writers).

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/core/error.h"

namespace mavg::testing_data {

inline std::string Fixture(const std::string& name) {
  return std::string(MAVG_TEST_FIXTURES) + "/kaldi/" + name;
}

// A fresh directory per test under testing::TempDir(), removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("mavg-data-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Raw little-endian value.
template <typename T>
std::string Raw(T value) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &value, sizeof(T));
  return s;
}

// Kaldi's WriteBasicType for int32: size byte 4 + the value.
inline std::string KaldiInt32(int32_t value) { return std::string(1, '\4') + Raw(value); }

// "key \0B" + `token ` (the binary-archive entry header).
inline std::string BinaryEntry(const std::string& key, const std::string& token) {
  std::string s = key + " ";
  s.append("\0B", 2);
  if (!token.empty()) s += token + " ";
  return s;
}

// Expects `fn` to throw mavg::Error whose message contains every one of `parts`.
template <typename Fn>
void ExpectErrorContaining(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected mavg::Error";
  } catch (const mavg::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "multi-line message: " << message;
    for (const auto& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos)
          << "message '" << message << "' lacks '" << part << "'";
    }
  }
}

}  // namespace mavg::testing_data
