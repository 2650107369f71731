#include "util/hash.hpp"

#include <openssl/evp.h>
#include <stdexcept>

namespace ptxbench::util {
namespace {

std::string digest_hex(const EVP_MD* md, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, md, nullptr) != 1)
    throw std::runtime_error("EVP_Digest failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * std::size_t{len}, '0');
  for (std::size_t i = 0; i < len; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

} // namespace

std::string sha1_hex(std::string_view data) {
  return digest_hex(EVP_sha1(), data);
}
std::string sha256_hex(std::string_view data) {
  return digest_hex(EVP_sha256(), data);
}

} // namespace ptxbench::util
