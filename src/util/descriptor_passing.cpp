#include "util/descriptor_passing.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/uio.h>

namespace ptxbench::util {
namespace {

Error socket_error(std::string_view call, int error_number) {
  return make_error(ErrorKind::io, std::string(call) + ": " + std::strerror(error_number));
}

constexpr std::size_t kControlBytes = CMSG_SPACE(sizeof(int) * kMaxPassedDescriptors);

// One message: a one-byte payload and `control_bytes` of `control` for the descriptors.
struct Message {
  char payload = 'd';
  iovec io{};
  alignas(cmsghdr) char control[kControlBytes]{}; // room for kMaxPassedDescriptors
  msghdr header{};

  explicit Message(std::size_t control_bytes) {
    io = {&payload, 1};
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = control_bytes;
  }
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
};

} // namespace

Expected<SocketPair> make_socket_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return make_error(ErrorKind::subprocess, std::string("socketpair: ") + std::strerror(errno));
  return SocketPair{Fd(fds[0]), Fd(fds[1])};
}

Status send_descriptors(int socket, std::span<const int> descriptors) {
  if (descriptors.empty() || descriptors.size() > kMaxPassedDescriptors)
    return make_error(ErrorKind::invalid_input,
                      "between 1 and 64 descriptors go in one message, not " +
                          std::to_string(descriptors.size()));
  Message message(CMSG_SPACE(sizeof(int) * descriptors.size()));
  cmsghdr* header = CMSG_FIRSTHDR(&message.header);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int) * descriptors.size());
  std::memcpy(CMSG_DATA(header), descriptors.data(), sizeof(int) * descriptors.size());
  ssize_t sent = 0;
  do
    sent = ::sendmsg(socket, &message.header, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent != 1)
    return socket_error("sendmsg", sent < 0 ? errno : EIO);
  return Ok{};
}

Expected<std::vector<Fd>> receive_descriptors(int socket, std::size_t count) {
  Message message(kControlBytes);
  ssize_t got = 0;
  do
    got = ::recvmsg(socket, &message.header, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (got < 0 && errno == EINTR);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return make_error(ErrorKind::io, "no descriptors were waiting on the socket");
  if (got < 0)
    return socket_error("recvmsg", errno);
  std::vector<Fd> received;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message.header); header != nullptr;
       header = CMSG_NXTHDR(&message.header, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS)
      continue;
    const std::size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < n; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
      received.emplace_back(fd);
    }
  }
  const bool truncated = (message.header.msg_flags & MSG_CTRUNC) != 0;
  if (received.size() != count || truncated)
    return make_error(ErrorKind::io, "expected " + std::to_string(count) +
                                         " descriptors on the socket, " +
                                         std::to_string(received.size()) + " arrived" +
                                         (truncated ? " (cut short)" : ""));
  return received;
}

} // namespace ptxbench::util
