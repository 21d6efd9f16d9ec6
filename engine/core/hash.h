#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mavg {

// Lower-case hex SHA-256 of `data` (OpenSSL).
std::string Sha256Hex(std::string_view data);

// Lower-case hex SHA-256 of the bytes [begin, begin + length) of a file (length < 0: to the
// end), read in chunks; throws naming the path when it cannot be read.
std::string Sha256FileHex(const std::string& path, int64_t begin = 0, int64_t length = -1);

}  // namespace mavg
