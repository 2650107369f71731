// The reference latency cache file: what it reads, and a damaged file read as none.
#include "exec/reference_cache.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace ptxbench::exec {
namespace {

TEST(ReferenceLatencyCache, EntriesReadAndAWrongTypedOneNamesItsPath) {
  auto entries = parse_reference_latencies(R"({"gemm | NVIDIA H200 | cuBLASLt": 0.81})",
                                           "reference_latency.json");
  ASSERT_TRUE(entries) << entries.error().message;
  EXPECT_DOUBLE_EQ(entries->at("gemm | NVIDIA H200 | cuBLASLt"), 0.81);

  auto wrong = parse_reference_latencies(R"({"a | g | l": 1.0, "b | g | l": "0.5"})",
                                         "reference_latency.json");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(wrong.error().message,
            R"(reference_latency.json: $["b | g | l"]: expected a number, got string)");
  auto zero = parse_reference_latencies(R"({"a | g | l": 0})", "f");
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message.find("expected a latency > 0 ms, got 0"), std::string::npos);
}

TEST(ReferenceLatencyCache, ADamagedFileIsReadAsNone) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("ptxbench_reference_cache_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream(file) << R"({"p | g | l": "fast"})";
    ReferenceLatencyCache cache(file);
    EXPECT_FALSE(cache.get("p", "g", "l"));
    cache.put("p", "g", "l", 2.5);
  }
  ReferenceLatencyCache again(file);
  EXPECT_EQ(again.get("p", "g", "l"), 2.5);
  std::filesystem::remove(file);
}

} // namespace
} // namespace ptxbench::exec
