// The build stage's token filter with a real tokenizer: Hugging Face `tokenizers` and the
// vocabulary shipped inside the PyPI package anthropic 0.37.1, installed by scripts/setup.sh in
// .deps/python-tokenizer and served on loopback in vLLM's /tokenize shape by
// tests/support/tokenize_server.py (the server is a test helper; the counts are the library's).
// A row one token over --max-tokens is dropped, the rows at or under it are kept, and every
// count the build recorded equals the library's count of the row's text.
#include "adapt/sft_build.hpp"
#include "model/http_transport.hpp"
#include "model_stage_support.hpp"
#include "util/process.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdlib>
#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::adapt;
using namespace ptxbench::adapt::testing;

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(PTXBENCH_SOURCE_DIR).parent_path();
const fs::path kServer = kRoot / "tests/support/tokenize_server.py";

std::string python_path() {
  const char* inherited = std::getenv("PYTHONPATH");
  return "PYTHONPATH=" + (kRoot / ".deps/python-tokenizer").string() +
         (inherited != nullptr && *inherited != '\0' ? std::string(":") + inherited : "");
}

bool tokenizer_installed() {
  util::PosixProcessRunner runner;
  util::ProcessOptions options;
  options.extra_env = {python_path()};
  auto result = runner.run({"python3", "-c",
                            "import importlib.util, sys, tokenizers; "
                            "sys.exit(0 if importlib.util.find_spec('anthropic') else 1)"},
                           options);
  return result && result->succeeded();
}

// The library's count of `text`, from the helper's count mode.
std::int64_t library_count(const ScratchDir& dir, const std::string& text) {
  const auto file = dir.write("row.txt", text);
  util::PosixProcessRunner runner;
  util::ProcessOptions options;
  options.extra_env = {python_path()};
  auto result = runner.run({"python3", kServer.string(), "count", file.string()}, options);
  EXPECT_TRUE(result && result->succeeded()) << (result ? result->err : result.error().message);
  return result && result->succeeded() ? std::stoll(result->out) : -1;
}

// The helper serving /tokenize on loopback for the test's lifetime.
class TokenizeServer {
public:
  TokenizeServer() {
    auto pipe = util::make_pipe();
    if (!pipe)
      throw util::Fatal(pipe.error().message);
    util::SpawnOptions options;
    options.argv = {"python3", kServer.string(), "serve"};
    options.env = util::environment_with({python_path()});
    options.fds = {util::FdMapping{pipe->write.get(), 1}};
    options.other_fds = util::OtherFds::close;
    auto pid = util::spawn(options);
    if (!pid)
      throw util::Fatal(pid.error().message);
    m_pid = *pid;
    pipe->write.reset();
    util::LineReader reader(std::move(pipe->read), 256);
    auto line = reader.read_line(std::chrono::steady_clock::now() + std::chrono::seconds(60));
    if (!line || !line->starts_with("port "))
      throw util::Fatal("tokenize_server.py did not say its port");
    m_url = "http://127.0.0.1:" + line->substr(5);
  }
  ~TokenizeServer() { util::kill_group_and_reap(m_pid); }
  TokenizeServer(const TokenizeServer&) = delete;
  TokenizeServer& operator=(const TokenizeServer&) = delete;
  const std::string& url() const { return m_url; }

private:
  pid_t m_pid = -1;
  std::string m_url;
};

RationaleRecord done_rationale(const std::string& id, std::string reasoning) {
  RationaleRecord r;
  r.id = id;
  r.kind = "fixit";
  r.status = "done";
  r.reasoning = std::move(reasoning);
  r.reasoning_model = "reasoner";
  r.prompt_version = "v3_trajectory_adopted";
  return r;
}

std::vector<Json> rows(const fs::path& dir) {
  return read_lines(dir / "fixit/build/sft.jsonl");
}

std::string row_text(const Json& row) {
  std::string text;
  for (const Json& message : row["messages"])
    text += message["content"].get<std::string>() + "\n";
  return text;
}

} // namespace

TEST(RealTokenizer, RowOneTokenOverTheLimitIsDroppedAndRowsUnderItAreKept) {
  if (!tokenizer_installed())
    GTEST_SKIP() << "the real tokenizer is not installed: PyPI tokenizers 0.20.3 and "
                    "anthropic 0.37.1 (for its tokenizer.json) in "
                 << (kRoot / ".deps/python-tokenizer") << " — run scripts/setup.sh";
  ScratchDir dir;
  const std::vector<PairRecord> pairs{pair(0), pair(1)};
  write_records(dir.path() / "fixit/pairs/pairs.jsonl", pairs);
  const std::string reasoning(
      "I start from the shapes: M = 8192, N = 7168, K = 5120; a 128x256 tile with a 64-deep "
      "K step keeps two warpgroups busy while TMA fills the next stage.");
  write_records(dir.path() / "fixit/synthesize/rationales.jsonl",
                std::vector{done_rationale(pairs[0].id, reasoning),
                            done_rationale(pairs[1].id, reasoning + " Then the epilogue.")});
  TokenizeServer server;
  auto transport = model::make_curl_transport();
  EndpointTokenizer tokenizer(*transport, server.url(), "claude-legacy", TokenizeApi::vllm);

  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{std::nullopt, 42}, tokenizer));
  std::map<std::string, std::int64_t> counts; // by pair id
  for (const Json& row : rows(dir.path())) {
    const std::int64_t recorded = row["metadata"]["tokens"].get<std::int64_t>();
    EXPECT_EQ(recorded, library_count(dir, row_text(row)));
    counts[row["id"].get<std::string>()] = recorded;
  }
  ASSERT_EQ(counts.size(), 2u);
  const std::int64_t shorter = counts.at(pairs[0].id);
  const std::int64_t longer = counts.at(pairs[1].id);
  ASSERT_LT(shorter, longer);
  EXPECT_LT(longer - shorter, 10); // " Then the epilogue." is a few tokens

  // The limit one under the longer row: it is one token over, the shorter one under.
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{longer - 1, 42}, tokenizer));
  auto kept = rows(dir.path());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0]["id"], pairs[0].id);
  const auto manifest = Json::parse(*util::read_file(dir.path() / "fixit/build/manifest.json"));
  EXPECT_NE(manifest.dump().find(std::to_string(longer) + " tokens > --max-tokens " +
                                 std::to_string(longer - 1)),
            std::string::npos)
      << manifest.dump(2);
  EXPECT_EQ(manifest["tokenizer"]["approximate"], false);
  // At exactly the longer row's count, both are kept.
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{longer, 42}, tokenizer));
  EXPECT_EQ(rows(dir.path()).size(), 2u);
}
