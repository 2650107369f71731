#include "util/hash.hpp"

#include <array>
#include <openssl/evp.h>
#include <random>
#include <stdexcept>

namespace ptxbench::util {
namespace {

std::string hex_of(const unsigned char* bytes, std::size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * size, '0');
  for (std::size_t i = 0; i < size; ++i) {
    hex[2 * i] = kHex[bytes[i] >> 4];
    hex[2 * i + 1] = kHex[bytes[i] & 0xf];
  }
  return hex;
}

std::string digest_hex(const EVP_MD* md, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, md, nullptr) != 1)
    throw std::runtime_error("EVP_Digest failed");
  return hex_of(digest, len);
}

} // namespace

std::string sha1_hex(std::string_view data) {
  return digest_hex(EVP_sha1(), data);
}
std::string sha256_hex(std::string_view data) {
  return digest_hex(EVP_sha256(), data);
}

std::string random_hex_128() {
  std::random_device random;
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); i += 4) {
    const std::uint32_t word = random();
    for (std::size_t j = 0; j < 4; ++j)
      bytes[i + j] = static_cast<unsigned char>(word >> (8 * j));
  }
  return hex_of(bytes.data(), bytes.size());
}

} // namespace ptxbench::util
