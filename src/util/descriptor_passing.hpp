// Passing open descriptors between processes over a Unix socket (SCM_RIGHTS): how the
// supervisor hands its shareable GPU allocations (protocol/device_buffer.hpp) to a child, whose
// request and reply channels are pipes and cannot carry descriptors.
//
// Invariants: every descriptor made or received here is close-on-exec; a receive never blocks
// (the sender sends before it writes the request that needs them) and takes exactly the
// number asked for, closing any extra it got.
#pragma once

#include "util/error.hpp"
#include "util/process.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace ptxbench::util {

struct SocketPair {
  Fd parent;
  Fd child;
};

// socketpair(AF_UNIX, SOCK_STREAM), both ends close-on-exec. ErrorKind::subprocess on refusal.
Expected<SocketPair> make_socket_pair();

// Sends `descriptors` (at most kMaxPassedDescriptors) in one message with one byte of payload.
// ErrorKind::io with errno text when the socket refuses (the peer is gone).
Status send_descriptors(int socket, std::span<const int> descriptors);

// The `count` descriptors already queued on `socket`, in the order sent. ErrorKind::io when
// fewer are waiting (none sent, or the message was cut), naming how many arrived.
Expected<std::vector<Fd>> receive_descriptors(int socket, std::size_t count);

inline constexpr std::size_t kMaxPassedDescriptors = 64;

} // namespace ptxbench::util
