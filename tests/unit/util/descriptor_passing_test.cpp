// util/descriptor_passing.hpp on real sockets: descriptors arrive in order and name what was
// sent, in this process and in a forked one; a receive never blocks and takes exactly the
// count asked for.
#include "util/descriptor_passing.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace ptxbench::util {
namespace {

std::string read_some(int fd) {
  char buffer[64];
  const ssize_t got = ::read(fd, buffer, sizeof buffer);
  return got > 0 ? std::string(buffer, static_cast<std::size_t>(got)) : std::string();
}

TEST(DescriptorPassing, DescriptorsArriveInOrderAndNameWhatWasSent) {
  auto sockets = make_socket_pair();
  ASSERT_TRUE(sockets) << sockets.error().message;
  auto first = make_pipe();
  auto second = make_pipe();
  ASSERT_TRUE(first && second);
  ASSERT_TRUE(send_descriptors(sockets->parent.get(),
                               std::vector<int>{first->write.get(), second->write.get()}));
  auto received = receive_descriptors(sockets->child.get(), 2);
  ASSERT_TRUE(received) << received.error().message;
  ASSERT_EQ(received->size(), 2u);
  EXPECT_EQ(::write((*received)[0].get(), "one", 3), 3);
  EXPECT_EQ(::write((*received)[1].get(), "two", 3), 3);
  EXPECT_EQ(read_some(first->read.get()), "one");
  EXPECT_EQ(read_some(second->read.get()), "two");
  EXPECT_NE(::fcntl((*received)[0].get(), F_GETFD) & FD_CLOEXEC, 0) << "close-on-exec";
}

TEST(DescriptorPassing, AReceiveWithNothingSentFailsAtOnce) {
  auto sockets = make_socket_pair();
  ASSERT_TRUE(sockets);
  auto received = receive_descriptors(sockets->child.get(), 1);
  ASSERT_FALSE(received);
  EXPECT_EQ(received.error().kind, ErrorKind::io);
  EXPECT_NE(received.error().message.find("no descriptors"), std::string::npos);
}

TEST(DescriptorPassing, AReceiveOfAnotherCountFailsNamingBoth) {
  auto sockets = make_socket_pair();
  auto pipe = make_pipe();
  ASSERT_TRUE(sockets && pipe);
  ASSERT_TRUE(send_descriptors(sockets->parent.get(),
                               std::vector<int>{pipe->read.get(), pipe->write.get()}));
  auto received = receive_descriptors(sockets->child.get(), 3);
  ASSERT_FALSE(received);
  EXPECT_NE(received.error().message.find("expected 3 descriptors on the socket, 2 arrived"),
            std::string::npos)
      << received.error().message;
}

TEST(DescriptorPassing, NoneOrTooManyAreRefusedBeforeAnythingIsSent) {
  auto sockets = make_socket_pair();
  ASSERT_TRUE(sockets);
  EXPECT_FALSE(send_descriptors(sockets->parent.get(), std::vector<int>{}));
  EXPECT_FALSE(
      send_descriptors(sockets->parent.get(), std::vector<int>(kMaxPassedDescriptors + 1, 0)));
  EXPECT_FALSE(receive_descriptors(sockets->child.get(), 1)) << "nothing was sent";
}

TEST(DescriptorPassing, ASendToAClosedPeerIsAnErrorNotASignal) {
  auto sockets = make_socket_pair();
  auto pipe = make_pipe();
  ASSERT_TRUE(sockets && pipe);
  sockets->child.reset();
  auto sent = send_descriptors(sockets->parent.get(), std::vector<int>{pipe->read.get()});
  ASSERT_FALSE(sent);
  EXPECT_EQ(sent.error().kind, ErrorKind::io);
}

TEST(DescriptorPassing, AnotherProcessWritesThroughWhatItReceived) {
  auto sockets = make_socket_pair();
  auto pipe = make_pipe();
  ASSERT_TRUE(sockets && pipe);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) { // the forked process polls for the descriptor, then _exits
    sockets->parent.reset();
    pipe->write.reset();
    for (int attempt = 0; attempt < 500; ++attempt) {
      auto received = receive_descriptors(sockets->child.get(), 1);
      if (received) {
        const bool wrote = ::write((*received)[0].get(), "far", 3) == 3;
        ::_exit(wrote ? 0 : 2);
      }
      ::usleep(10'000);
    }
    ::_exit(3);
  }
  sockets->child.reset();
  ASSERT_TRUE(send_descriptors(sockets->parent.get(), std::vector<int>{pipe->write.get()}));
  pipe->write.reset(); // the child's copy is now the only writer
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(read_some(pipe->read.get()), "far");
}

} // namespace
} // namespace ptxbench::util
