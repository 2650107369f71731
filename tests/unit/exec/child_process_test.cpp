// The supervisor's side of the reply channel, against a stand-in child (a bash script speaking
// the protocol): a reply must carry its request's id, and nothing may be left on the channel
// (peers-and-cheats.md §2 class 10, a forged result line).
#include "exec/child_process.hpp"
#include "protocol/child_arguments.hpp"
#include "protocol/system_call_filter.hpp"
#include "support/scratch_dir.hpp"

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <signal.h>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::exec {
namespace {

using test_support::ScratchDir;

// Answers every request with one honest reply (message "real"), after `before` has run: it
// may write to the reply fd first with `answer ID MESSAGE`; $id is the request's id.
std::filesystem::path stand_in_child(const ScratchDir& dir, const std::string& before) {
  const std::string script =
      "#!/bin/bash\n"
      "req=$4; rep=$6\n" // --device D --request-fd N --reply-fd M
      "answer() {\n"
      "  printf '{\"id\":%s,\"ok\":true,\"error\":\"none\",\"message\":\"%s\","
      "\"invoke_status\":0,\"cuda_error\":\"\"}\\n' \"$1\" \"$2\" >&\"$rep\"\n"
      "}\n"
      "while IFS= read -r line <&\"$req\"; do\n"
      "  [[ $line =~ \\\"id\\\":([0-9]+) ]] && id=${BASH_REMATCH[1]}\n"
      "  " +
      before +
      "\n"
      "  answer \"$id\" real\n"
      "  [[ $line == *'\"op\":\"exit\"'* ]] && exit 0\n"
      "done\n";
  const std::filesystem::path path = dir.write("child.sh", script);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

const std::string kForgedWithoutId = "answer 1 forged";
const std::string kForgedWithTheId = "answer \"$id\" forged";

util::Expected<protocol::Reply> ping(CandidateProcess& child) {
  protocol::Request request;
  request.op = protocol::RequestOp::ping;
  return child.request(request, std::chrono::seconds(10));
}

TEST(ReplyChannel, AnHonestChildsRepliesCarryTheirRequestsIds) {
  ScratchDir dir;
  auto child = CandidateProcess::start(stand_in_child(dir, ":"), 0, dir.path() / "child.log");
  ASSERT_TRUE(child) << child.error().message;
  for (int i = 0; i < 3; ++i) {
    auto reply = ping(*child);
    ASSERT_TRUE(reply) << reply.error().message;
    EXPECT_EQ(reply->message, "real");
  }
  child->stop();
}

TEST(ReplyChannel, AForgedReplyWithoutTheRequestsIdIsABadResponse) {
  ScratchDir dir;
  auto child =
      CandidateProcess::start(stand_in_child(dir, kForgedWithoutId), 0, dir.path() / "child.log");
  ASSERT_TRUE(child) << child.error().message;
  auto reply = ping(*child);
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, util::ErrorKind::bad_response);
  EXPECT_NE(reply.error().message.find("reply channel"), std::string::npos)
      << reply.error().message;
  child->stop();
}

// A forger that read the id out of the server's memory is taken at its word once; the real
// reply that follows is then left over and fails the next request (the evaluator always sends
// one more: the ping of its recheck phase).
TEST(ReplyChannel, AForgedReplyWithTheIdLeavesTheRealOneOverAndTheNextRequestFails) {
  ScratchDir dir;
  auto child =
      CandidateProcess::start(stand_in_child(dir, kForgedWithTheId), 0, dir.path() / "child.log");
  ASSERT_TRUE(child) << child.error().message;
  auto first = ping(*child);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->message, "forged");
  auto second = ping(*child);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, util::ErrorKind::bad_response);
  EXPECT_NE(second.error().message.find("reply channel"), std::string::npos)
      << second.error().message;
  child->stop();
}

TEST(CandidateProcess, AMissingBinaryFailsToStartWithAClearError) {
  ScratchDir dir;
  const auto missing = dir.path() / "no-such-candidate";
  auto child = CandidateProcess::start(missing, 0, dir.path() / "child.log");
  ASSERT_FALSE(child);
  EXPECT_EQ(child.error().kind, util::ErrorKind::subprocess);
  EXPECT_EQ(child.error().message,
            "cannot execute '" + missing.string() + "': No such file or directory");
}

// The supervisor's device reaches the child as an explicit argument, beside the protocol fds
// (protocol/child_arguments.hpp), and the child's parser reads back what was sent.
TEST(CandidateProcess, TheChildIsStartedForTheSupervisorsDevice) {
  ScratchDir dir;
  const auto script = dir.write("child.sh", "#!/bin/bash\necho \"$@\"\nsleep 30\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  auto child = CandidateProcess::start(script, 5, dir.path() / "child.log");
  ASSERT_TRUE(child) << child.error().message;
  for (int wait = 0; wait < 1000 && child->log_tail().empty(); ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string line = child->log_tail();
  EXPECT_EQ(line, "--device 5 --request-fd 3 --reply-fd 4 --buffer-fd 5\n");
  std::vector<std::string> words;
  for (std::size_t at = 0, next; at < line.size() - 1; at = next + 1) {
    next = line.find_first_of(" \n", at);
    words.push_back(line.substr(at, next - at));
  }
  auto parsed = protocol::parse_child_arguments(words);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->device, 5);
  EXPECT_EQ(parsed->buffer_fd, 5) << "the buffer socket, beside the pipes";
  EXPECT_EQ(parsed->mode, protocol::ChildMode::serve);
  child->stop();
}

// The child closes its request pipe and lingers: our write meets a pipe nobody reads, which
// with SIGPIPE at its default disposition would kill the test instead of failing the request.
TEST(CandidateProcess, ARequestToAChildThatClosedItsRequestPipeIsAnError) {
  ASSERT_NE(::signal(SIGPIPE, SIG_DFL), SIG_ERR);
  ScratchDir dir;
  const auto script =
      dir.write("child.sh", "#!/bin/bash\neval \"exec $4<&-\"\necho closed\nsleep 30\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  auto child = CandidateProcess::start(script, 0, dir.path() / "child.log");
  ASSERT_TRUE(child) << child.error().message;
  for (int wait = 0; wait < 1000 && child->log_tail().find("closed") == std::string::npos; ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(child->log_tail(), "closed\n");
  auto reply = ping(*child);
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, util::ErrorKind::subprocess) << reply.error().message;
  EXPECT_FALSE(child->alive());
}

// A child its system-call filter ended: the failure names the refused call from the child's log.
TEST(CandidateProcess, AChildEndedByItsFilterIsReportedWithTheRefusedCall) {
  ScratchDir dir;
  const std::string refuse =
      "echo 'some output'; echo '" + std::string(protocol::kSystemCallRefusedPrefix) +
      "openat for writing (257)' >&2; exit " + std::to_string(protocol::kSystemCallRefusedExit);
  auto child = CandidateProcess::start(stand_in_child(dir, refuse), 0, dir.path() / "child.log");
  ASSERT_TRUE(child) << child.error().message;
  auto reply = ping(*child);
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, util::ErrorKind::subprocess);
  EXPECT_NE(reply.error().message.find("was ended by its system-call filter, which refused "
                                       "openat for writing (257)"),
            std::string::npos)
      << reply.error().message;
}

} // namespace
} // namespace ptxbench::exec
