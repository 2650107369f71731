// compute-sanitizer memcheck's stream-ordered race reports (--track-stream-ordered-races all):
// the paper's "undefined behaviour during profiling" case, a kernel enqueued after
// cudaFreeAsync that reads the freed temporary (tests/kernels/sm90_wgmma_use_after_free.cu).
//
// No H200 capture of such a report exists yet, so the samples are written from public reports
// of compute-sanitizer (CUDA 13), not captured here. What is from them:
//  - the headline "Use-after-free on allocation of size N bytes at 0x…" followed by "Address
//    0x… is potentially accessed after it is free'd", a blank line and "Saved host backtrace up
//    to driver entry point at <API> time": NVlabs/cutile-rs issue #252 (a cudaMemcpy access);
//  - "Free-before-alloc on allocation of size 256 bytes at 0x…" / "Address 0x… is potentially
//    free'd before it is allocated" and the backtraces "at cudaFreeAsync time" then "at
//    cudaMallocAsync time" with their "Host Frame: cuMemFreeAsync [0x…] in libcuda.so.1"
//    lines: rapidsai/rmm issue #2156;
//  - "Use-before-alloc on allocation of size 5,592 bytes at 0x…" / "Address 0x… is potentially
//    accessed before it is allocated": a cudf/kvikio sanitizer log quoted in the sirius project;
//  - the option's values (all, use-before-alloc, use-after-free, no) and the two race kinds:
//    NVIDIA's Compute Sanitizer documentation, "Stream-ordered race detection";
//  - "at kernel launch time" is what 2025.3.1 prints for an access by a kernel
//    (tests/data/measure/sanitizer_memcheck_oob.txt).
// Assumed, not seen: that a race found in a kernel is reported with that "kernel launch"
// backtrace, and the order of the access's and the free's backtraces. The parser depends on
// neither: it reads the headline and the "Address" line and stops at the first backtrace.
#include "measure/sanitizer.hpp"

#include <gtest/gtest.h>

namespace ptxbench::measure {
namespace {

constexpr std::string_view kUseAfterFreeReport =
    "========= COMPUTE-SANITIZER\n"
    "========= Use-after-free on allocation of size 16,384 bytes at 0x7f3a6c000000\n"
    "=========     Address 0x7f3a6c000000 is potentially accessed after it is free'd\n"
    "=========\n"
    "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
    "=========         Host Frame: run(__nv_bfloat16 const*, __nv_bfloat16 const*, "
    "__nv_bfloat16*, long, CUstream_st*) in kernel.cu:287 [0x3d1e] in kernel.so\n"
    "=========         Host Frame: ptxbench_invoke [0x4a40] in kernel.so\n"
    "=========\n"
    "=========     Saved host backtrace up to driver entry point at cudaFreeAsync time\n"
    "=========         Host Frame: cuMemFreeAsync [0x3a2a5f] in libcuda.so.1\n"
    "=========         Host Frame: cudaFreeAsync [0x779ff] in libcudart.so.13\n"
    "=========         Host Frame: run(__nv_bfloat16 const*, __nv_bfloat16 const*, "
    "__nv_bfloat16*, long, CUstream_st*) in kernel.cu:285 [0x3cf0] in kernel.so\n"
    "=========\n"
    "========= ERROR SUMMARY: 1 error\n";

TEST(StreamOrderedRace, UseAfterFreeIsAClassifiedErrorWithTheAllocationsAddress) {
  const SanitizerReport report = parse_sanitizer_output(kUseAfterFreeReport);
  EXPECT_FALSE(report.clean);
  EXPECT_EQ(report.error_count, 1u);
  EXPECT_EQ(report.printed_errors, 1u);
  EXPECT_EQ(report.stream_ordered_races, 1u);
  EXPECT_EQ(report.api_errors, 0u);
  ASSERT_TRUE(report.first_error);
  const SanitizerError& error = *report.first_error;
  EXPECT_EQ(error.stream_ordered, StreamOrderedRace::use_after_free);
  EXPECT_EQ(to_string(error.stream_ordered), "use_after_free");
  EXPECT_EQ(error.kind, "Use-after-free on allocation of size 16,384 bytes at 0x7f3a6c000000");
  EXPECT_EQ(error.address, "0x7f3a6c000000");
  EXPECT_EQ(error.detail, "Address 0x7f3a6c000000 is potentially accessed after it is free'd");
  EXPECT_TRUE(error.kernel.empty()) << "the host backtrace names no kernel";
  EXPECT_TRUE(error.file.empty());
  EXPECT_TRUE(error.access.empty());
  EXPECT_TRUE(only_stream_ordered_races(report));
}

TEST(StreamOrderedRace, UseBeforeAllocAndFreeBeforeAllocAreTheirOwnKinds) {
  const SanitizerReport report = parse_sanitizer_output(
      "========= COMPUTE-SANITIZER\n"
      "========= Free-before-alloc on allocation of size 256 bytes at 0x3366000000\n"
      "=========     Address 0x3366000000 is potentially free'd before it is allocated\n"
      "=========     \n"
      "=========     Saved host backtrace up to driver entry point at cudaFreeAsync time\n"
      "=========         Host Frame: cuMemFreeAsync [0x3a2a5f] in libcuda.so.1\n"
      "=========     \n"
      "=========     Saved host backtrace up to driver entry point at cudaMallocAsync time\n"
      "=========         Host Frame: cuMemAllocAsync [0x3a1c4e] in libcuda.so.1\n"
      "=========     \n"
      "========= Use-before-alloc on allocation of size 5,592 bytes at 0x3362000200\n"
      "=========     Address 0x3362000200 is potentially accessed before it is allocated\n"
      "=========\n"
      "=========     Saved host backtrace up to driver entry point at cudaMemcpy time\n"
      "=========         Host Frame: cuMemcpyHtoDAsync_v2 [0x364679] in libcuda.so.1\n"
      "=========\n"
      "========= ERROR SUMMARY: 2 errors\n");
  EXPECT_EQ(report.printed_errors, 2u);
  EXPECT_EQ(report.stream_ordered_races, 2u);
  ASSERT_TRUE(report.first_error);
  EXPECT_EQ(report.first_error->stream_ordered, StreamOrderedRace::free_before_alloc);
  EXPECT_EQ(report.first_error->address, "0x3366000000");
  EXPECT_EQ(report.first_error->detail,
            "Address 0x3366000000 is potentially free'd before it is allocated");
  EXPECT_TRUE(only_stream_ordered_races(report));
  // The second headline is counted, not parsed; its kind is read on its own here.
  const SanitizerReport second = parse_sanitizer_output(
      "========= Use-before-alloc on allocation of size 5,592 bytes at 0x3362000200\n"
      "========= ERROR SUMMARY: 1 error\n");
  ASSERT_TRUE(second.first_error);
  EXPECT_EQ(second.first_error->stream_ordered, StreamOrderedRace::use_before_alloc);
}

TEST(StreamOrderedRace, OrdinaryMemoryErrorsAreNotRaces) {
  const SanitizerReport report = parse_sanitizer_output(
      "========= Invalid __global__ read of size 4 bytes\n"
      "=========     at uaf_consumer_2_kernel(const float *, __nv_bfloat16 *, long)+0x70 in "
      "kernel.cu:212\n"
      "=========     by thread (0,0,0) in block (0,0,0)\n"
      "=========     Access to 0x7f3a6c000000 is out of bounds\n"
      "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
      "========= ERROR SUMMARY: 1 error\n");
  ASSERT_TRUE(report.first_error);
  EXPECT_EQ(report.first_error->stream_ordered, StreamOrderedRace::none);
  EXPECT_EQ(report.stream_ordered_races, 0u);
  EXPECT_FALSE(only_stream_ordered_races(report));
}

TEST(StreamOrderedRace, ARaceBesideAnotherErrorIsNotOnlyARace) {
  // An out-of-bounds write first, then the race: the report is not undefined behaviour alone.
  std::string text(kUseAfterFreeReport);
  text.insert(text.find("========= Use-after-free"),
              "========= Invalid __global__ write of size 2 bytes\n"
              "=========     at tail_write(__nv_bfloat16 *, long)+0x80 in kernel.cu:78\n"
              "=========     Access to 0x7f3a6e000000 is out of bounds\n"
              "=========     Saved host backtrace up to driver entry point at kernel launch "
              "time\n");
  text.replace(text.find("ERROR SUMMARY: 1 error"), 22, "ERROR SUMMARY: 2 errors");
  const SanitizerReport report = parse_sanitizer_output(text);
  EXPECT_EQ(report.printed_errors, 2u);
  EXPECT_EQ(report.stream_ordered_races, 1u);
  ASSERT_TRUE(report.first_error);
  EXPECT_EQ(report.first_error->stream_ordered, StreamOrderedRace::none);
  EXPECT_EQ(report.first_error->kernel, "tail_write(__nv_bfloat16 *, long)");
  EXPECT_FALSE(only_stream_ordered_races(report));
}

TEST(StreamOrderedRace, UnprintedErrorsMightBeAnythingElse) {
  // Past --print-limit the summary counts errors nobody saw: not known to be races only.
  std::string text(kUseAfterFreeReport);
  text.replace(text.find("ERROR SUMMARY: 1 error"), 22, "ERROR SUMMARY: 300 errors");
  const SanitizerReport report = parse_sanitizer_output(text);
  EXPECT_EQ(report.error_count, 300u);
  EXPECT_EQ(report.stream_ordered_races, 1u);
  EXPECT_FALSE(only_stream_ordered_races(report));
}

} // namespace
} // namespace ptxbench::measure
