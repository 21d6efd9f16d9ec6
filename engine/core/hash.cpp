#include "engine/core/hash.h"

#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <vector>

#include "engine/core/error.h"

namespace mavg {

namespace {

std::string Hex(const unsigned char* digest, unsigned int length) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  MAVG_CHECK(EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) == 1,
             "SHA-256 failed");
  return Hex(digest, length);
}

std::string Sha256FileHex(const std::string& path, int64_t begin, int64_t length) {
  std::ifstream in(path, std::ios::binary);
  MAVG_CHECK(in.good(), "{}: cannot open for reading", path);
  in.seekg(begin);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  MAVG_CHECK(ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1, "SHA-256 failed");
  std::vector<char> buf(1 << 20);
  int64_t left = length;
  while (in && left != 0) {
    const auto want = static_cast<std::streamsize>(left < 0 ? static_cast<int64_t>(buf.size())
                                                            : std::min<int64_t>(left, buf.size()));
    in.read(buf.data(), want);
    const std::streamsize got = in.gcount();
    if (got <= 0) break;
    MAVG_CHECK(EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(got)) == 1,
               "SHA-256 failed");
    if (left > 0) left -= got;
  }
  MAVG_CHECK(!in.bad(), "{}: read error", path);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  MAVG_CHECK(EVP_DigestFinal_ex(ctx.get(), digest, &n) == 1, "SHA-256 failed");
  return Hex(digest, n);
}

}  // namespace mavg
