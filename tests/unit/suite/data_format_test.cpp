// The problem files are written in the exact spelling of the FlashInfer-Trace writers, so that
// re-saving them through the trace module is a no-op.
#include "suite/suite.hpp"
#include "trace/json_io.hpp"
#include "util/fs.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace ptxbench::suite {
namespace {

TEST(ProblemFiles, DefinitionsAreInTheDefinitionWriterSpelling) {
  const auto root = Suite::default_root() / "definitions";
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".json")
      continue;
    ++files;
    auto definition = trace::load_definition(entry.path());
    ASSERT_TRUE(definition) << definition.error().message;
    EXPECT_EQ(trace::dump_pretty(trace::to_json(*definition)) + "\n",
              *util::read_file(entry.path()))
        << entry.path();
  }
  EXPECT_EQ(files, 16u);
}

TEST(ProblemFiles, WorkloadsAreOneCompactLineEach) {
  const auto root = Suite::default_root() / "workloads";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".jsonl")
      continue;
    auto traces = trace::load_traces_jsonl(entry.path());
    ASSERT_TRUE(traces) << traces.error().message;
    ASSERT_EQ(traces->size(), 1u) << entry.path();
    EXPECT_EQ(trace::dump_compact(trace::to_json(traces->front())) + "\n",
              *util::read_file(entry.path()))
        << entry.path();
  }
}

} // namespace
} // namespace ptxbench::suite
