// The command line of ptxbench-candidate: what the supervisor writes, the child reads back the
// same, and a command line that is incomplete or wrong is refused with a message saying why.
#include "protocol/child_arguments.hpp"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace ptxbench::protocol {
namespace {

std::vector<std::string> without_binary(std::vector<std::string> argv) {
  argv.erase(argv.begin());
  return argv;
}

std::string refusal(const std::vector<std::string>& words) {
  auto parsed = parse_child_arguments(words);
  if (parsed)
    return "accepted";
  EXPECT_EQ(parsed.error().kind, util::ErrorKind::invalid_input);
  return parsed.error().message.substr(0, parsed.error().message.find('\n'));
}

TEST(ChildArguments, TheServeCommandLineCarriesTheDeviceAndReadsBackTheSame) {
  const auto argv = serve_argv("/bin/ptxbench-candidate", 1, 3, 4);
  EXPECT_EQ(argv, (std::vector<std::string>{"/bin/ptxbench-candidate", "--device", "1",
                                            "--request-fd", "3", "--reply-fd", "4"}));
  auto parsed = parse_child_arguments(without_binary(argv));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->mode, ChildMode::serve);
  EXPECT_EQ(parsed->device, 1);
  EXPECT_EQ(parsed->request_fd, 3);
  EXPECT_EQ(parsed->reply_fd, 4);
  EXPECT_EQ(parsed->buffer_fd, -1) << "no buffer socket unless given";
}

TEST(ChildArguments, TheBufferSocketIsOnlyForServing) {
  const auto argv = serve_argv("/bin/ptxbench-candidate", 0, 3, 4, 5);
  EXPECT_EQ(argv.back(), "5");
  auto parsed = parse_child_arguments(without_binary(argv));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->buffer_fd, 5);
  EXPECT_EQ(refusal({"--device", "0", "--single-call", "s", "--inputs", "i", "--buffer-fd", "5"}),
            "ptxbench-candidate: --buffer-fd belongs to the serving mode");
}

TEST(ChildArguments, TheSingleCallCommandLineCarriesTheDeviceAndItsOptions) {
  SingleCallOptions options;
  options.nvtx_range = "ptxbench_call";
  options.warmup = 2;
  const auto argv = single_call_argv("c", 7, "/t/spec.json", "/t/inputs.bin", options);
  auto parsed = parse_child_arguments(without_binary(argv));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->mode, ChildMode::single_call);
  EXPECT_EQ(parsed->device, 7);
  EXPECT_EQ(parsed->spec, "/t/spec.json");
  EXPECT_EQ(parsed->inputs, "/t/inputs.bin");
  EXPECT_EQ(parsed->options.nvtx_range, "ptxbench_call");
  EXPECT_EQ(parsed->options.warmup, 2);
  const auto plain = single_call_argv("c", 0, "s", "i", {});
  EXPECT_EQ(plain.size(), 7u) << "no range and no warm-up: neither flag";
}

TEST(ChildArguments, TheDeviceIsNeverImplied) {
  EXPECT_EQ(refusal({"--request-fd", "3", "--reply-fd", "4"}),
            "ptxbench-candidate: --device is required");
}

TEST(ChildArguments, ABadCommandLineIsRefusedWithItsReason) {
  EXPECT_EQ(refusal({"--device", "one", "--request-fd", "3", "--reply-fd", "4"}),
            "ptxbench-candidate: --device \"one\" is not a non-negative integer");
  EXPECT_EQ(refusal({"--device", "-1", "--request-fd", "3", "--reply-fd", "4"}),
            "ptxbench-candidate: --device \"-1\" is not a non-negative integer");
  EXPECT_EQ(refusal({"--device", "0", "--request-fd", "3", "--reply-fd"}),
            "ptxbench-candidate: --reply-fd needs a value");
  EXPECT_EQ(refusal({"--device", "0", "--gpu", "1"}),
            "ptxbench-candidate: unknown argument \"--gpu\"");
  EXPECT_EQ(refusal({"--device", "0", "--request-fd", "3"}),
            "ptxbench-candidate: --request-fd and --reply-fd go together");
  EXPECT_EQ(refusal({"--device", "0", "--single-call", "s"}),
            "ptxbench-candidate: --single-call and --inputs go together");
  EXPECT_EQ(refusal({"--device", "0"}),
            "ptxbench-candidate: give either --request-fd and --reply-fd, or --single-call");
  EXPECT_EQ(refusal({"--device", "0", "--request-fd", "3", "--reply-fd", "4", "--single-call", "s",
                     "--inputs", "i"}),
            "ptxbench-candidate: give either --request-fd and --reply-fd, or --single-call");
}

TEST(ChildArguments, ARefusalEndsWithTheUsage) {
  auto parsed = parse_child_arguments(std::vector<std::string>{});
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find(child_usage()), std::string::npos);
}

} // namespace
} // namespace ptxbench::protocol
