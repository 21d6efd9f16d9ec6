#pragma once
// Errors: code throws mavg::Error through MAVG_CHECK / MAVG_FAIL; `main` catches it and prints
// one line. The message is meant for the user (name the file, key or utterance); the source
// location is kept apart for debugging (printed with --verbose).

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace mavg {

// `text` as valid UTF-8: every byte that is not part of a well-formed sequence becomes the
// four characters "\xNN", so that any message (which may quote bytes of a corrupt file) can be
// printed, stored in JSON and in the database.
std::string ValidUtf8(std::string_view text);
// The offset of the first byte of `text` that is not part of a well-formed UTF-8 sequence, or
// std::string_view::npos when `text` is valid UTF-8.
size_t InvalidUtf8At(std::string_view text);

// `text` as one printable line of valid UTF-8: ValidUtf8, then every control character (a
// newline or carriage return quoted from a file, ...) but tab written as "\n", "\r" or "\xNN".
// What every error message is made of: one `mavg: error:` line, a valid JSON string.
std::string ErrorText(std::string_view text);

class Error : public std::runtime_error {
 public:
  // The message is kept as one line of valid UTF-8 (ErrorText).
  explicit Error(const std::string& message, std::string location = {})
      : std::runtime_error(ErrorText(message)), location_(std::move(location)) {}
  // "file.cpp:123" of the throw site, or empty.
  const std::string& Location() const { return location_; }

 private:
  std::string location_;
};

namespace detail {
[[noreturn]] void Throw(const char* file, int line, std::string message);
}  // namespace detail

}  // namespace mavg

// Throws mavg::Error with the formatted message when `cond` is false.
#define MAVG_CHECK(cond, ...)                                                         \
  do {                                                                                \
    if (!(cond)) ::mavg::detail::Throw(__FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
  } while (0)

// Throws mavg::Error with the formatted message.
#define MAVG_FAIL(...) ::mavg::detail::Throw(__FILE__, __LINE__, fmt::format(__VA_ARGS__))
