// Content hashes (OpenSSL libcrypto): SHA-1 for FlashInfer-Trace solution hashes, SHA-256 for
// our own cache keys and source identities. Results are lower-case hex.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench::util {

std::string sha1_hex(std::string_view data);
std::string sha256_hex(std::string_view data);

} // namespace ptxbench::util
