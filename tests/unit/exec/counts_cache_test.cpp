// The counts cache (exec/counts_cache.hpp): an entry is found only under the key it was stored
// for, every part of the key matters, and a damaged or foreign entry is a miss that the next
// store replaces.
#include "exec/counts_cache.hpp"
#include "sass/counters.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace ptxbench::exec {
namespace {

CountsKey a_key() {
  return {"5f1c…source",
          "9a0b…library",
          "gemm_n7168_k5120",
          "uuid-1",
          42,
          3,
          "NVIDIA H200",
          "13000",
          {"smsp__sass_inst_executed_op_shared_gmma.sum"},
          "user",
          "0.9.0"};
}

trace::Json some_counts() {
  return trace::Json::parse(R"({"available": true, "ranges": [{"kernel": "gemm",
      "values": {"smsp__sass_inst_executed_op_shared_gmma.sum": 9175040}}]})");
}

class CountsCacheFolder : public ::testing::Test {
protected:
  void SetUp() override {
    m_folder = std::filesystem::temp_directory_path() /
               ("ptxbench_counts_cache_" + std::to_string(::getpid()));
    std::filesystem::remove_all(m_folder);
  }
  void TearDown() override { std::filesystem::remove_all(m_folder); }
  std::filesystem::path m_folder;
};

TEST_F(CountsCacheFolder, AStoredCountIsFoundByAnotherProcessUnderTheSameKeyOnly) {
  {
    CountsCache cache(m_folder);
    EXPECT_FALSE(cache.get(a_key()));
    cache.put(a_key(), some_counts(), "2026-12-04T10:00:00Z");
  }
  CountsCache again(m_folder); // a later supervisor: nothing in memory
  auto found = again.get(a_key());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->counts, some_counts());
  EXPECT_EQ(found->counted_at, "2026-12-04T10:00:00Z");

  // Each part of the key is something the executed instructions can depend on.
  const std::vector<void (*)(CountsKey&)> changes = {
      [](CountsKey& k) { k.source_sha256 = "other"; },
      [](CountsKey& k) { k.library_sha256 = "other"; },
      [](CountsKey& k) { k.problem = "gemm_n4096_k4096"; },
      [](CountsKey& k) { k.workload = "uuid-2"; },
      [](CountsKey& k) { k.seed = 43; },
      [](CountsKey& k) { k.sets = 2; },
      [](CountsKey& k) { k.gpu = "NVIDIA H100"; },
      [](CountsKey& k) { k.driver = "13010"; },
      [](CountsKey& k) { k.metrics.emplace_back("smsp__sass_inst_executed_op_tma_ld.sum"); },
      [](CountsKey& k) { k.replay = "kernel"; },
      [](CountsKey& k) { k.ptxbench = "0.9.1"; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    CountsKey other = a_key();
    changes[i](other);
    EXPECT_NE(file_name(other), file_name(a_key())) << "change " << i;
    EXPECT_FALSE(again.get(other)) << "change " << i;
  }
}

TEST_F(CountsCacheFolder, ADamagedOrForeignEntryIsAMissAndTheNextStoreReplacesIt) {
  std::filesystem::create_directories(m_folder);
  const auto path = m_folder / file_name(a_key());
  std::ofstream(path) << "{\"schema\": 1, \"key\": ";
  CountsCache cache(m_folder);
  EXPECT_FALSE(cache.get(a_key()));

  // An entry stored for another key under this file name (an edited or colliding file).
  CountsKey other = a_key();
  other.seed = 7;
  trace::Json foreign = {{"schema", 1},
                         {"key", to_json(other)},
                         {"counted_at", "2026-12-04T10:00:00Z"},
                         {"counts", some_counts()}};
  std::ofstream(path) << foreign.dump();
  EXPECT_FALSE(CountsCache(m_folder).get(a_key()));

  cache.put(a_key(), some_counts(), "2026-12-04T11:00:00Z");
  auto found = CountsCache(m_folder).get(a_key());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->counted_at, "2026-12-04T11:00:00Z");
}

TEST(CountsCache, AnEntryOfTheWrongShapeNamesItsJsonPath) {
  const std::string key_json = to_json(a_key()).dump();
  auto read = [&](const std::string& text) {
    auto entry = parse_counts_entry(text, a_key(), "counts/x.json");
    return entry ? std::string() : entry.error().message;
  };
  EXPECT_EQ(read("[]"), "counts/x.json: $: expected an object, got array");
  EXPECT_EQ(
      read("{\"schema\": 2, \"key\": " + key_json + ", \"counted_at\": \"t\", \"counts\": {}}"),
      "counts/x.json: $.schema: expected an integer in [1, 1], got 2");
  EXPECT_EQ(
      read("{\"schema\": 1, \"key\": " + key_json + ", \"counted_at\": \"t\", \"counts\": [1]}"),
      "counts/x.json: $.counts: expected an object, got array");
  EXPECT_EQ(read("{\"schema\": 1, \"key\": " + key_json +
                 ", \"counted_at\": \"t\", \"counts\": {}, \"extra\": 1}"),
            "counts/x.json: $.extra: unknown key");
  EXPECT_EQ(read("{\"schema\": 1, \"key\": {}, \"counted_at\": \"t\", \"counts\": {}}"),
            "counts/x.json: $.key: the entry was stored for another key");
  EXPECT_EQ(read("{\"schema\": 1, \"key\": " + key_json + ", \"counts\": {}}"),
            "counts/x.json: $: missing required key \"counted_at\"");
  EXPECT_EQ(read("not json"), "counts/x.json: $: not JSON");
}

TEST(CountsCache, OnlyAnAskedForCountWithAFixedSeedAndAKernelSoMayBeReused) {
  EvalOptions options;
  EXPECT_EQ(counts_cache_refusal(options, true), std::nullopt); // off: not asked for
  options.counts_cache = CountsCacheUse::on;
  EXPECT_EQ(counts_cache_refusal(options, true),
            "not used: the input seed is secret (fix it to reuse)");
  options.seed = 7;
  EXPECT_EQ(counts_cache_refusal(options, true), "");
  EXPECT_EQ(counts_cache_refusal(options, false), "not used: the candidate has no kernel.so");
  options.dynamic_counts = false; // nothing is counted, so nothing is reused
  EXPECT_EQ(counts_cache_refusal(options, true), std::nullopt);
}

TEST(CountsCache, TheKeyCarriesTheArchitecturesMetricsAndTheChildsReplay) {
  const CountsContext context{"gemm_n7168_k5120",   "uuid-1", 42, 3, "NVIDIA H200", 13000,
                              compile::Arch::sm_90a};
  const CountsKey hopper = counts_key("src", "lib", context);
  EXPECT_EQ(hopper.metrics, sass::metric_names(*sass::counters_for("sm_90a")));
  EXPECT_EQ(hopper.replay, "user");
  EXPECT_EQ(hopper.driver, "13000");
  EXPECT_EQ(hopper.seed, 42U);
  CountsContext blackwell = context;
  blackwell.arch = compile::Arch::sm_100a;
  EXPECT_NE(file_name(counts_key("src", "lib", blackwell)), file_name(hopper));
  EXPECT_NE(file_name(counts_key("src", "other lib", context)), file_name(hopper));
}

TEST(CountsCache, WithoutAFolderEntriesLiveInMemoryOnly) {
  CountsCache cache({});
  cache.put(a_key(), some_counts(), "2026-12-04T10:00:00Z");
  EXPECT_TRUE(cache.get(a_key()));
  EXPECT_FALSE(CountsCache({}).get(a_key()));
}

} // namespace
} // namespace ptxbench::exec
