// Content hashes (OpenSSL libcrypto): SHA-1 for FlashInfer-Trace solution hashes, SHA-256 for
// our own cache keys and source identities. Results are lower-case hex; so are random ids.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench::util {

std::string sha1_hex(std::string_view data);
std::string sha256_hex(std::string_view data);
// 128 bits from the OS's random source as 32 lower-case hex digits: ids that must not collide
// across processes and hosts (a service's task ids, a fleet client's submission keys).
std::string random_hex_128();

} // namespace ptxbench::util
