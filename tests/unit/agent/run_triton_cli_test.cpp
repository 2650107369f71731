// `ptxbench run --language triton` end to end on this machine: the real binary against a model
// server on loopback; the replies are ```python candidates that the real Triton gate (python3)
// checks; the store, the prompts and the exports carry the language.
#include "store/run_store.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/ptxbench_cli.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <gtest/gtest.h>
#include <mutex>

using namespace ptxbench;
using test_support::chat_body;
using test_support::LoopbackServer;
using test_support::reply_json;
using test_support::run_ptxbench;
using test_support::ScratchDir;
using test_support::write_registry;

namespace {

constexpr const char* kTorchReply = R"(First try.
```python
import torch
import triton
import triton.language as tl

@triton.jit
def noop(x):
    pass

def run(A, B, C, M):
    C.copy_(torch.matmul(A, B.T))
```
)";

constexpr const char* kCleanReply = R"(Now in Triton.
```python
import triton
import triton.language as tl

@triton.jit
def zero(c, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(c + offs, tl.zeros((BLOCK,), tl.bfloat16), mask=offs < n)

def run(A, B, C, M):
    zero[(triton.cdiv(M * 7168, 1024),)](C, M * 7168, BLOCK=1024)
```
)";

} // namespace

TEST(RunTritonCli, ATritonRunGatesEachPythonReplyAndStoresTheLanguage) {
  ScratchDir dir, cache;
  std::mutex mutex;
  std::vector<std::string> system_prompts;
  int calls = 0;
  LoopbackServer server([&](int, const httplib::Request& request, httplib::Response& response) {
    auto body = nlohmann::json::parse(request.body);
    std::lock_guard lock(mutex);
    system_prompts.push_back(body["messages"][0]["content"].get<std::string>());
    const char* replies[] = {"no code", kTorchReply, kCleanReply};
    reply_json(response, chat_body(replies[std::min(calls++, 2)]));
  });
  auto registry = write_registry(dir, server.base_url());
  auto run_dir = dir.path() / "run";
  auto result = run_ptxbench({"run", "--registry", registry.string(), "--model", "loop",
                              "--language", "triton", "--variant", "default", "--turns", "3",
                              "--target-speedup", "0", "--quiet", "--out", run_dir.string()},
                             cache);
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  EXPECT_NE(result.err.find("every Triton turn stops after the Triton gate"), std::string::npos)
      << result.err;

  auto store = store::RunStore::open_existing(run_dir);
  ASSERT_TRUE(store);
  auto trajectories = *(*store)->trajectories();
  ASSERT_EQ(trajectories.size(), 1u);
  EXPECT_EQ(trajectories[0].key.language, trace::Language::triton);
  EXPECT_EQ(trajectories[0].key.prompt_variant, "triton-gemm-0");
  auto turns = *(*store)->finished_turns(trajectories[0].id);
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(turns[0].category, store::TurnCategory::extraction);
  EXPECT_NE(turns[0].feedback->find("```python"), std::string::npos) << *turns[0].feedback;
  EXPECT_EQ(turns[1].category, store::TurnCategory::banned_library);
  EXPECT_NE(turns[1].feedback->find("line 10: `C.copy_(torch.matmul(A, B.T))`"), std::string::npos)
      << *turns[1].feedback;
  EXPECT_EQ(turns[2].category, store::TurnCategory::static_only);
  EXPECT_NE(turns[2].kernel_source->find("def run(A, B, C, M):"), std::string::npos);

  std::lock_guard lock(mutex);
  ASSERT_FALSE(system_prompts.empty());
  EXPECT_NE(system_prompts[0].find("# Triton contract"), std::string::npos);
  EXPECT_NE(system_prompts[0].find("```python\ndef run(\n"), std::string::npos);
  auto csv = util::read_file(run_dir / "exports" / "turns.csv");
  ASSERT_TRUE(csv);
  EXPECT_NE(csv->find(",triton,\n"), std::string::npos) << *csv; // language, no condition
}

TEST(RunTritonCli, AnUnknownLanguageIsAUsageError) {
  ScratchDir dir, cache;
  auto bad = run_ptxbench(
      {"run", "--model", "demo", "--language", "rust", "--out", (dir.path() / "r").string()},
      cache);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--language must be cuda or triton"), std::string::npos) << bad.err;
}
