// The synthesize stage against a reasoning teacher on loopback: replies without <my_reasoning>,
// replies that name the shown kernel and HTTP 500s cost passes; every record keeps its calls'
// tokens, cost and attempts; an outage leaves done records intact and failed ones retryable; a
// resume, after a SIGKILL too, leaves one record per id.
#include "adapt/synthesize.hpp"
#include "model/http_transport.hpp"
#include "model_stage_support.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/ptxbench_cli.hpp"

#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>

using namespace ptxbench;
using namespace ptxbench::adapt;
using namespace ptxbench::adapt::testing;
using test_support::chat_body;
using test_support::ChatUsage;
using test_support::LoopbackServer;
using test_support::reply_json;

namespace {

const std::string kMonologue(400, 'm');

std::string good_reply(const std::string& mark) {
  return "<think>planning " + mark +
         "</think>\n<my_reasoning>\nI start from the shapes: M = "
         "8192 ... " +
         mark + " " + kMonologue + "\n</my_reasoning>\n";
}

// Replies scripted per record: each record's n-th request gets script[n] (the last repeats);
// "ok" is a good reply, "500" an HTTP 500, anything else the reply text itself.
class Reasoner {
public:
  explicit Reasoner(std::map<int, std::vector<std::string>> scripts)
      : m_scripts(std::move(scripts)) {}
  void answer(const httplib::Request& request, httplib::Response& response) {
    const int mark = mark_of(request);
    std::string step;
    {
      std::lock_guard lock(m_mutex);
      auto& script = m_scripts[mark];
      std::size_t& seen = m_seen[mark];
      step = script.empty() ? "ok" : script[std::min(seen, script.size() - 1)];
      ++seen;
    }
    if (step == "500")
      return reply_json(response, {{"error", {{"message", "overloaded"}}}}, 500);
    reply_json(response, chat_body(step == "ok" ? good_reply("MARK-" + std::to_string(mark)) : step,
                                   ChatUsage{1000, 500}));
  }
  void set(int mark, std::vector<std::string> script) {
    std::lock_guard lock(m_mutex);
    m_scripts[mark] = std::move(script);
    m_seen[mark] = 0;
  }

private:
  std::mutex m_mutex;
  std::map<int, std::vector<std::string>> m_scripts;
  std::map<int, std::size_t> m_seen;
};

struct SynthesizeFixture {
  ScratchDir dir;
  Reasoner reasoner;
  LoopbackServer server;
  model::ModelRegistry registry;
  std::unique_ptr<model::HttpTransport> transport = model::make_curl_transport();

  explicit SynthesizeFixture(std::map<int, std::vector<std::string>> scripts, int max_attempts = 1)
      : reasoner(std::move(scripts)),
        server([this](int, const httplib::Request& q, httplib::Response& r) {
          reasoner.answer(q, r);
        }) {
    auto loaded = model::load_registry(write_priced_registry(dir, server.base_url(), max_attempts));
    if (!loaded)
      throw util::Fatal(loaded.error().message);
    registry = std::move(*loaded);
    write_records(synthesize_paths(dir.path(), RationaleKind::fixit).input,
                  std::vector{pair(0), pair(1), pair(2)});
  }
  SynthesizeOptions options(int max_passes = 3) const {
    SynthesizeOptions o;
    o.data_dir = dir.path();
    o.reasoner = "loop";
    o.concurrency = 2;
    o.max_passes = max_passes;
    return o;
  }
  util::Expected<SynthesizeResult> run(int max_passes = 3) {
    SynthesizeDeps deps;
    deps.registry = &registry;
    deps.client.transport = transport.get();
    deps.client.retry.initial_delay = std::chrono::milliseconds(1);
    deps.client.retry.max_delay = std::chrono::milliseconds(2);
    return run_synthesize(options(max_passes), deps);
  }
  // The output's records by id; a second record of an id fails the test.
  std::map<std::string, RationaleRecord> records() const {
    std::map<std::string, RationaleRecord> out;
    for (const Json& line : read_lines(synthesize_paths(dir.path(), RationaleKind::fixit).output)) {
      auto record = rationale_from_json(line);
      EXPECT_TRUE(record) << record.error().message;
      EXPECT_TRUE(out.emplace(record->id, *record).second) << "two records of " << record->id;
    }
    return out;
  }
};

} // namespace

TEST(RationalePrompt, FixitShowsTheTrajectoryTheWrongKernelItsErrorAndTheExpertsKernel) {
  const PairRecord p = pair(7);
  const RationalePrompt prompt = fixit_rationale_prompt(p);
  EXPECT_EQ(prompt.version, "v3_trajectory_adopted");
  EXPECT_NE(prompt.system.find("CUDA kernel optimization expert"), std::string::npos);
  EXPECT_NE(prompt.system.find("internal monologue"), std::string::npos);
  EXPECT_NE(prompt.system.find("<my_reasoning>"), std::string::npos);
  const std::string& u = prompt.user;
  const auto system = u.find("SYSTEM PROMPT");
  const auto task = u.find("TASK PROMPT");
  const auto wrong = u.find(p.failure.kernel_source);
  const auto error = u.find(p.failure.feedback);
  const auto expert = u.find("## Expert's Kernel\n\n```cuda\n" + p.repaired_kernel);
  ASSERT_NE(expert, std::string::npos);
  EXPECT_LT(system, task);
  EXPECT_LT(task, wrong);
  EXPECT_LT(wrong, error);
  EXPECT_LT(error, expert);
  EXPECT_NE(u.find("BEFORE writing the corrected kernel"), std::string::npos);
  EXPECT_NE(u.find("between 10,000 and 50,000 characters"), std::string::npos);
}

TEST(RationalePrompt, KernelGenIsTheCorrectKernelAdoptedPrompt) {
  const RationalePrompt prompt = kernelgen_rationale_prompt(correct(3));
  EXPECT_EQ(prompt.version, "v1_correct_kernel_adopted");
  EXPECT_NE(prompt.user.find("Above you can see the Base Knowledge available to the Expert"),
            std::string::npos);
  EXPECT_NE(prompt.user.find("BEFORE writing the kernel"), std::string::npos);
  EXPECT_NE(prompt.user.find("about 40,000 characters"), std::string::npos);
  EXPECT_NE(prompt.user.find("## Expert's Kernel\n\n```cuda\n// correct kernel MARK-3"),
            std::string::npos);
}

TEST(RationaleExtraction, ThinkIsStrippedAndOnlyMyReasoningIsKept) {
  auto r = extract_rationale("<think>draft <my_reasoning>no</my_reasoning></think>\nSure.\n"
                             "<my_reasoning>\n" +
                                 kMonologue + "\n</my_reasoning> trailing",
                             {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->reasoning, kMonologue);
  EXPECT_EQ(r->thinking, "draft <my_reasoning>no</my_reasoning>");
  // A reasoning model that opens its answer inside the think block only closes it.
  auto open =
      extract_rationale("hidden</think><my_reasoning>" + kMonologue + "</my_reasoning>", {});
  ASSERT_TRUE(open);
  EXPECT_EQ(open->thinking, "hidden");
}

TEST(RationaleExtraction, RefusesNoBlockTheWrongLengthAndTheKernelNamed) {
  EXPECT_NE(extract_rationale("just text", {}).error().message.find("no <my_reasoning>"),
            std::string::npos);
  EXPECT_NE(extract_rationale("<my_reasoning>short</my_reasoning>", {})
                .error()
                .message.find("5 characters, outside [200, 190000]"),
            std::string::npos);
  EXPECT_FALSE(extract_rationale("<my_reasoning>" + kMonologue + "</my_reasoning>", {200, 300}));
  for (std::string phrase : {"the Expert's Kernel", "THE GIVEN KERNEL", "the provided solution",
                             "the Expert\xe2\x80\x99s kernel"}) {
    auto named = extract_rationale(
        "<my_reasoning>" + kMonologue + " as " + phrase + " shows</my_reasoning>", {});
    ASSERT_FALSE(named) << phrase;
    EXPECT_NE(named.error().message.find("names the shown kernel"), std::string::npos);
  }
}

TEST(Synthesize, RefusedRepliesAndA500CostPassesAndEveryCallIsCounted) {
  SynthesizeFixture f(
      {{0, {"no reasoning here, sorry", "ok"}},
       {1, {"<my_reasoning>" + kMonologue + " unlike the Expert's Kernel</my_reasoning>", "ok"}},
       {2, {"500", "ok"}}},
      /*max_attempts=*/2);
  auto result = f.run();
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->done, 3u);
  EXPECT_EQ(result->failed, 0u);
  auto records = f.records();
  ASSERT_EQ(records.size(), 3u);
  const RationaleRecord& no_block = records.at(pair(0).id);
  EXPECT_EQ(no_block.status, "done");
  EXPECT_EQ(no_block.attempts, 2);
  EXPECT_EQ(no_block.input_tokens, 2000);
  EXPECT_EQ(no_block.output_tokens, 1000);
  EXPECT_DOUBLE_EQ(no_block.cost_usd.value_or(0), 2 * (1000 * 1.0 + 500 * 2.0) / 1e6);
  EXPECT_NE(no_block.reasoning.find("MARK-0"), std::string::npos);
  EXPECT_EQ(no_block.thinking, "planning MARK-0");
  EXPECT_EQ(no_block.kind, "fixit");
  EXPECT_EQ(no_block.prompt_version, "v3_trajectory_adopted");
  EXPECT_EQ(no_block.reasoning_model, "loop");
  EXPECT_EQ(no_block.temperature, 1.0);
  EXPECT_EQ(records.at(pair(1).id).attempts, 2);
  // The 500 was retried by the client within one pass: two HTTP attempts, one paid reply.
  const RationaleRecord& retried = records.at(pair(2).id);
  EXPECT_EQ(retried.status, "done");
  EXPECT_EQ(retried.attempts, 2);
  EXPECT_EQ(retried.input_tokens, 1000);
  auto manifest = nlohmann::json::parse(
      *util::read_file(synthesize_paths(f.dir.path(), RationaleKind::fixit).manifest));
  EXPECT_EQ(manifest["counts"]["done"], 3);
}

TEST(Synthesize, AnOutageLeavesDoneRecordsAndTheNextCallRetriesOnlyTheFailedOnes) {
  SynthesizeFixture f({{0, {"ok"}}, {1, {"500"}}, {2, {"never the format"}}});
  auto first = f.run(/*max_passes=*/2);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->done, 1u);
  EXPECT_EQ(first->failed, 2u);
  auto failed = f.records();
  EXPECT_EQ(failed.at(pair(1).id).status, "failed");
  EXPECT_NE(failed.at(pair(1).id).error.find("pass 2"), std::string::npos);
  EXPECT_NE(failed.at(pair(2).id).error.find("no <my_reasoning>"), std::string::npos);
  const auto output = synthesize_paths(f.dir.path(), RationaleKind::fixit).output;
  std::string done_line;
  for (const Json& line : read_lines(output))
    if (line["id"] == pair(0).id)
      done_line = line.dump();
  const std::size_t requests = f.server.count();
  f.reasoner.set(1, {"ok"});
  f.reasoner.set(2, {"ok"});
  auto second = f.run();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->already_done, 1u);
  EXPECT_EQ(second->done, 2u);
  EXPECT_EQ(f.server.count(), requests + 2);
  auto records = f.records(); // one per id
  ASSERT_EQ(records.size(), 3u);
  for (const auto& [id, record] : records)
    EXPECT_EQ(record.status, "done") << id;
  EXPECT_EQ(read_lines(output)[0].dump(), done_line); // kept as it was, first
  auto third = f.run();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->already_done, 3u);
  EXPECT_EQ(f.server.count(), requests + 2);
}

TEST(Synthesize, KernelGenReadsTheCorrectKernelsIntoItsOwnFile) {
  SynthesizeFixture f({});
  write_records(synthesize_paths(f.dir.path(), RationaleKind::kernelgen).input,
                std::vector{correct(5), correct(6)});
  SynthesizeOptions options = f.options();
  options.kind = RationaleKind::kernelgen;
  SynthesizeDeps deps;
  deps.registry = &f.registry;
  deps.client.transport = f.transport.get();
  auto result = run_synthesize(options, deps);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->done, 2u);
  auto lines = read_lines(synthesize_paths(f.dir.path(), RationaleKind::kernelgen).output);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["kind"], "kernelgen");
  EXPECT_EQ(lines[0]["prompt_version"], "v1_correct_kernel_adopted");
}

// The binary killed (SIGKILL) while a call hangs: the records written before it stay, and the
// next run writes the rest once, whatever the file held.
TEST(SynthesizeCli, AResumeAfterSigkillLeavesOneDoneRecordPerId) {
  ScratchDir dir;
  ScratchDir cache;
  std::atomic<bool> hang{true};
  std::unique_ptr<LoopbackServer> server;
  server = std::make_unique<LoopbackServer>(
      [&](int index, const httplib::Request& request, httplib::Response& response) {
        if (index >= 2 && hang.load()) {
          server->hold(std::chrono::seconds(60));
          return reply_json(response, {{"error", {{"message", "gone"}}}}, 503);
        }
        reply_json(response, chat_body(good_reply("MARK-" + std::to_string(mark_of(request)))));
      });
  const auto registry = write_priced_registry(dir, server->base_url());
  std::vector<PairRecord> pairs{pair(0), pair(1), pair(2), pair(3)};
  write_records(synthesize_paths(dir.path(), RationaleKind::fixit).input, pairs);
  const std::vector<std::string> args{"fixit",           "synthesize",    dir.path().string(),
                                      "--reasoner",      "loop",          "--registry",
                                      registry.string(), "--concurrency", "1"};
  auto killed =
      test_support::run_ptxbench(args, std::chrono::seconds(8), {test_support::cache_env(cache)});
  ASSERT_TRUE(killed) << killed.error().message;
  EXPECT_TRUE(killed->timed_out); // killed by SIGKILL at the deadline, the third call hanging
  const auto output = synthesize_paths(dir.path(), RationaleKind::fixit).output;
  ASSERT_EQ(read_lines(output).size(), 2u);
  // A torn line, as a writer killed mid-append would leave.
  ASSERT_TRUE(util::append_line(output, R"({"id": "torn", "kind": "fix)"));
  auto text = *util::read_file(output);
  ASSERT_TRUE(util::write_file_atomic(output, text.substr(0, text.size() - 1)));
  hang = false;
  server->release();
  auto resumed = test_support::run_ptxbench(args, cache);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  std::set<std::string> ids;
  for (const Json& line : read_lines(output)) {
    EXPECT_EQ(line["status"], "done");
    EXPECT_TRUE(ids.insert(line["id"].get<std::string>()).second) << line["id"];
  }
  EXPECT_EQ(ids.size(), 4u);
  for (const auto& p : pairs)
    EXPECT_TRUE(ids.contains(p.id));
}
