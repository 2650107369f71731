// The paper's Table 4 as one plan and one report, end to end: the shipped
// config/plans/table4.json (its six conditions, shrunk to two problems, one trajectory and two
// turns) run through the real loop with a replayed student and a fine-tuned model served on
// loopback, the static-only executor, a notes corpus and a held-out run. Each condition's
// prompts hold exactly the guidance and retrieved block they should, the store rebuilds every
// prompt the served model got, the leakage guard keeps the held-out pairs out, and `report`
// prints the six rows (golden file).
#include "adapt/repair_notes.hpp"
#include "agent/turn_prompt.hpp"
#include "store/run_store.hpp"
#include "support/golden.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/ptxbench_cli.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <gtest/gtest.h>
#include <set>

using namespace ptxbench;
using test_support::ScratchDir;

namespace {

const std::filesystem::path kShipped = std::filesystem::path(PTXBENCH_SOURCE_DIR) / "..";
constexpr std::string_view kMha = "mha_with_lse_d128";
constexpr std::string_view kGemm = "gemm_n7168_k5120";
constexpr std::string_view kGuidanceLine = "write a short \"kernel contract\" block";

// A kernel nvcc rejects: every turn fails to compile, so every turn retrieves.
const std::string kBroken = "#include <cuda_runtime.h>\n__global__ void attention_kernel() "
                            "{ undefined_call(); }\nvoid run(cudaStream_t stream) "
                            "{ attention_kernel<<<1, 1, 0, stream>>>(); }\n";

std::string reply_text() {
  return "```cuda\n" + kBroken + "```\n";
}

adapt::NotesRecord corpus_record(const std::string& id, const std::string& wrong,
                                 const std::filesystem::path& run, std::int64_t sample,
                                 const std::string& note) {
  adapt::NotesRecord r;
  r.id = id;
  r.status = "done";
  r.problem = std::string(kMha);
  r.wrong_kernel = wrong;
  r.fixed_kernel = "// fixed " + id + "\n";
  r.speedup = 0.5;
  r.notes.summary = "summary of " + id;
  for (int i = 0; i < 3; ++i) {
    adapt::InstructionNote n;
    n.instruction = note + "-" + std::to_string(i);
    n.shape_context = "any";
    r.notes.instruction_notes.push_back(n);
  }
  r.source = adapt::NotesSource{run.string(),
                                store::TrajectoryKey{"teacher", std::string(kMha), "none", sample},
                                0, run.string()};
  return r;
}

struct Table4Run {
  ScratchDir dir;
  ScratchDir cache;
  test_support::LoopbackServer server{[](int, const httplib::Request&, httplib::Response& res) {
    res.set_content(test_support::chat_body(reply_text()).dump(), "application/json");
  }};
  std::filesystem::path plan;
  std::filesystem::path corpus;
  std::filesystem::path held;
  std::filesystem::path run;

  Table4Run() {
    held = make_run_store("held-run");
    const auto kept = make_run_store("kept-run");
    // kept: a similar kernel from an allowed run; held: one from the held-out run; same-kernel:
    // the held kernel again, repaired in an allowed run (one retrieval group with it).
    const std::string similar = kBroken + "// variant\n";
    const std::string held_kernel = kBroken + "// held variant\n";
    std::string lines =
        adapt::to_json(corpus_record("pair-kept", similar, kept, 0, "KEPT")).dump() + "\n" +
        adapt::to_json(corpus_record("pair-held", held_kernel, held, 0, "HELD")).dump() + "\n" +
        adapt::to_json(corpus_record("pair-same-kernel", held_kernel, kept, 1, "SAMEKERNEL"))
            .dump() +
        "\n";
    corpus = dir.write("notes.jsonl", lines);
    const auto replies =
        dir.write("replies.jsonl", nlohmann::json{{"text", reply_text()}}.dump() + "\n" +
                                       nlohmann::json{{"text", reply_text()}}.dump() + "\n");
    nlohmann::json registry{
        {"models",
         {{"student", {{"provider", "replay"}, {"model", "replay"}, {"replay_file", replies}}},
          {"tuned",
           {{"provider", "openai"},
            {"base_url", server.base_url() + "/v1"},
            {"model", "tuned-checkpoint"},
            {"max_attempts", 1}}}}}};
    dir.write("models.json", registry.dump());
    auto shipped = util::read_file(kShipped / "config/plans/table4.json");
    EXPECT_TRUE(shipped);
    auto json = nlohmann::ordered_json::parse(*shipped);
    json["problems"] = {kMha, kGemm};
    json["prompt_variants"] = {"none"};
    json["trajectories"] = 1;
    json["turns"] = 2;
    json["jobs"] = 2;
    json["registry"] = (dir.path() / "models.json").string();
    json["guidance"]["file"] = (kShipped / "knowledge/guidance/mha_expert_guidance.md").string();
    plan = dir.write("table4.json", json.dump(2));
    run = dir.path() / "run";
  }

  std::filesystem::path make_run_store(const std::string& name) const {
    auto store = store::RunStore::open(dir.path() / name, store::RunInfo{"{}", "test", ""});
    EXPECT_TRUE(store) << store.error().message;
    return dir.path() / name;
  }

  util::ProcessResult start(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{
        "run",         "--plan",          plan.string(), "--set",         "student=student",
        "--set",       "finetuned=tuned", "--notes",     corpus.string(), "--held-out",
        held.string(), "--static-only",   "--out",       run.string(),    "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test_support::run_ptxbench(args, cache);
  }
};

struct Expected {
  bool guidance;
  std::string block; // the retrieved block's heading in the second prompt, or ""
};

Expected expected_for(const store::TrajectoryKey& key) {
  const bool mha = key.problem == kMha;
  const bool guided = key.condition != "no-guidance";
  std::string block;
  if (mha && key.condition == "guidance+notes")
    block = "## Retrieved repair notes from fixing similar historical wrong kernels";
  if (mha && key.condition == "guidance+notes+kernel")
    block =
        "## Retrieved best fixed kernels and notes from fixing similar historical wrong kernels";
  return {guided && mha, block};
}

std::string messages_text(const std::vector<model::Message>& messages) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : messages)
    out.push_back({{"role", model::to_string(m.role)}, {"content", m.content}});
  return out.dump();
}

} // namespace

TEST(Table4, SixConditionsRunEndToEndWithTheirGuidanceRetrievalAndReport) {
  Table4Run t;
  auto run = t.start();
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto store = store::RunStore::open_existing(t.run);
  ASSERT_TRUE(store) << store.error().message;
  auto trajectories = (*store)->trajectories();
  ASSERT_TRUE(trajectories);
  // student: 4 conditions, tuned: 2, on two problems.
  ASSERT_EQ(trajectories->size(), 12u);
  std::multiset<std::string> served; // what the tuned model's server may have been sent
  std::size_t retrieved = 0;
  for (const auto& trajectory : *trajectories) {
    SCOPED_TRACE(store::to_string(trajectory.key));
    const Expected want = expected_for(trajectory.key);
    for (std::int64_t turn = 0; turn < 2; ++turn) {
      auto prompt = agent::turn_prompt(**store, trajectory.id, turn, agent::ContextPolicy::full);
      ASSERT_TRUE(prompt) << prompt.error().message;
      const std::string& system = prompt->messages.front().content;
      EXPECT_EQ(system.find("## Expert guidance") != std::string::npos, want.guidance);
      EXPECT_EQ(system.find(kGuidanceLine) != std::string::npos, want.guidance);
      const std::string last = prompt->messages.back().content;
      for (const char* block : {"## Retrieved repair notes", "## Retrieved best fixed kernels"})
        EXPECT_EQ(last.find(block) != std::string::npos, turn == 1 && want.block.starts_with(block))
            << block;
      EXPECT_EQ(last.find("KEPT-0") != std::string::npos, turn == 1 && !want.block.empty());
      EXPECT_EQ(last.find("HELD"), std::string::npos);
      EXPECT_EQ(last.find("SAMEKERNEL"), std::string::npos);
      EXPECT_EQ(last.find("// fixed pair-kept") != std::string::npos,
                turn == 1 && want.block.starts_with("## Retrieved best"));
      // A retrieving condition records its retrieval also when it found nothing (GEMM: the
      // corpus holds MHA notes only).
      const bool retrieving = trajectory.key.condition.find("notes") != std::string::npos;
      ASSERT_EQ(prompt->retrievals.size(), turn == 1 && retrieving ? 1u : 0u);
      if (!prompt->retrievals.empty()) {
        const auto record = nlohmann::json::parse(prompt->retrievals.front().record_json);
        EXPECT_EQ(record["mode"],
                  trajectory.key.condition.ends_with("kernel") ? "notes+kernel" : "notes");
        EXPECT_EQ(record["held_out_excluded"], 2);
        EXPECT_EQ(record["corpus"], t.corpus.string());
        ASSERT_EQ(record["groups"].size(), want.block.empty() ? 0u : 1u) << record.dump();
        if (!want.block.empty()) {
          ++retrieved;
          EXPECT_EQ(record["groups"][0]["pair_ids"], nlohmann::json::array({"pair-kept"}));
          EXPECT_GT(record["groups"][0]["bm25"].get<double>(), 0);
        }
      }
      if (trajectory.key.model == "tuned")
        served.insert(messages_text(prompt->messages));
    }
  }
  EXPECT_EQ(retrieved, 2u);
  // Each turn's row of the per-turn export names its condition.
  auto csv = util::read_file(t.run / "exports" / "turns.csv");
  ASSERT_TRUE(csv);
  EXPECT_TRUE(csv->starts_with("model,") &&
              csv->find(",language,condition\n") != std::string::npos);
  EXPECT_EQ(std::count(csv->begin(), csv->end(), '\n'), 1 + 24);
  for (const char* row_end : {",cuda,guidance+notes+kernel\n", ",cuda,no-guidance\n"})
    EXPECT_NE(csv->find(row_end), std::string::npos) << row_end;
  // Every request the served model got is a prompt the store rebuilds, and each once.
  const auto requests = t.server.requests();
  ASSERT_EQ(requests.size(), 8u);
  std::multiset<std::string> sent;
  for (const auto& request : requests) {
    const nlohmann::json body = request.json();
    nlohmann::json messages = nlohmann::json::array();
    for (const auto& m : body["messages"])
      messages.push_back({{"role", m["role"]}, {"content", m["content"]}});
    sent.insert(messages.dump());
  }
  EXPECT_EQ(sent.size(), 8u);
  EXPECT_TRUE(sent == served) << "a request the server got is not a prompt the store rebuilds";

  auto report = test_support::run_ptxbench({"report", t.run.string(), "--format", "md"}, t.cache);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  for (const char* row : {"| student · no-guidance |", "| student · guidance |",
                          "| tuned · no-guidance |", "| tuned · guidance |",
                          "| student · guidance+notes |", "| student · guidance+notes+kernel |"})
    EXPECT_NE(report.out.find(row), std::string::npos) << row;
  std::string golden = report.out;
  for (auto at = golden.find(t.run.string()); at != std::string::npos;
       at = golden.find(t.run.string()))
    golden.replace(at, t.run.string().size(), "RUN");
  test_support::expect_golden("adapt/table4_report.md", golden);
}

TEST(Table4, ShowTurnPrintsTheStoredPromptAndAResumeKeepsTheConditions) {
  Table4Run t;
  ASSERT_EQ(t.start().exit_code, 0);
  auto store = store::RunStore::open_existing(t.run);
  ASSERT_TRUE(store);
  auto trajectories = (*store)->trajectories();
  ASSERT_TRUE(trajectories);
  const auto notes = std::ranges::find_if(*trajectories, [](const auto& r) {
    return r.key.condition == "guidance+notes" && r.key.problem == kMha;
  });
  ASSERT_NE(notes, trajectories->end());
  auto prompt = agent::turn_prompt(**store, notes->id, 1, agent::ContextPolicy::full);
  ASSERT_TRUE(prompt);
  auto shown = test_support::run_ptxbench(
      {"show-turn", t.run.string(), std::to_string(notes->id.value), "2", "--json"}, t.cache);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  auto json = nlohmann::json::parse(shown.out);
  EXPECT_EQ(json["condition"], "guidance+notes");
  ASSERT_EQ(json["messages"].size(), prompt->messages.size());
  for (std::size_t i = 0; i < prompt->messages.size(); ++i)
    EXPECT_EQ(json["messages"][i]["content"], prompt->messages[i].content);
  ASSERT_EQ(json["retrievals"].size(), 1u) << shown.out;
  EXPECT_EQ(json["retrievals"][0]["record"]["groups"][0]["pair_ids"][0], "pair-kept");
  auto missing = test_support::run_ptxbench({"show-turn", t.run.string(), "999", "1"}, t.cache);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no trajectory 999"), std::string::npos) << missing.err;

  auto resumed =
      test_support::run_ptxbench({"run", "--resume", t.run.string(), "--quiet"}, t.cache);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("0 turns this run"), std::string::npos) << resumed.out;
  auto again = (*store)->trajectories();
  ASSERT_TRUE(again);
  ASSERT_EQ(again->size(), trajectories->size());
  for (std::size_t i = 0; i < again->size(); ++i)
    EXPECT_EQ((*again)[i].key, (*trajectories)[i].key);
}

// Bad input is refused before any model call, and no run directory is left behind.
class Table4BadInput : public ::testing::Test {
protected:
  void expect_refused(const std::vector<std::string>& extra, const std::string& message,
                      const std::filesystem::path& plan = {}) {
    std::vector<std::string> args = extra;
    if (!plan.empty()) {
      args.insert(args.begin(), {"--plan", plan.string()});
    }
    util::ProcessResult result = plan.empty() ? m_run.start(args) : refuse_with_plan(args);
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
    EXPECT_EQ(m_run.server.count(), 0u);
    EXPECT_FALSE(std::filesystem::exists(m_run.run));
  }
  util::ProcessResult refuse_with_plan(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    for (const char* flag : {"--set", "student=student", "--static-only", "--out"})
      args.emplace_back(flag);
    args.push_back(m_run.run.string());
    return test_support::run_ptxbench(args, m_run.cache);
  }
  Table4Run m_run;
};

TEST_F(Table4BadInput, AMissingGuidanceFileIsNamed) {
  expect_refused({"--guidance", (m_run.dir.path() / "absent.md").string()}, "absent.md: no such");
}

TEST_F(Table4BadInput, AGuidanceFileThatIsNotUtf8IsRefusedAtItsByte) {
  const auto file = m_run.dir.write("latin1.md", "rule \xe9t\xe9\n");
  expect_refused({"--guidance", file.string()}, "not UTF-8 (byte 5");
}

TEST_F(Table4BadInput, AGuidanceFileOverTheBoundIsRefused) {
  const auto file = m_run.dir.write("huge.md", std::string(64 * 1024 + 1, 'x'));
  expect_refused({"--guidance", file.string()}, "more than the 65536");
}

TEST_F(Table4BadInput, AHeldOutRunThatIsNoRunStoreIsNamed) {
  std::filesystem::create_directories(m_run.dir.path() / "not-a-run");
  expect_refused({"--held-out", (m_run.dir.path() / "not-a-run").string()}, "holds no run store");
}

TEST_F(Table4BadInput, ANotesCorpusForAnotherProblemSetIsRefused) {
  auto record = corpus_record("pair-gqa", kBroken, m_run.held, 0, "GQA");
  record.problem = "gqa_paged_decode";
  record.source->run_dir = (m_run.dir.path() / "kept-run").string();
  record.source->repair_run_dir = record.source->run_dir;
  ASSERT_TRUE(util::write_file_atomic(m_run.corpus, adapt::to_json(record).dump() + "\n"));
  expect_refused({}, "it is a corpus for another problem set");
}

TEST_F(Table4BadInput, APlanWithAnUnknownConditionKindNamesItsJsonPath) {
  nlohmann::json plan{
      {"models", {"${student}"}},
      {"parameters", {{"student", "x"}}},
      {"registry", (m_run.dir.path() / "models.json").string()},
      {"conditions", {{{"name", "odd"}, {"guidance", false}, {"retrieval", "notes+fixed"}}}}};
  const auto file = m_run.dir.write("odd.json", plan.dump());
  expect_refused({}, "$.conditions[0].retrieval: unknown retrieval \"notes+fixed\"", file);
}

TEST_F(Table4BadInput, ASetNamingNoParameterIsRefused) {
  expect_refused({"--set", "teacher=x"}, "the plan declares no parameter \"teacher\"");
}

TEST(Table4, AResumeRefusesAGuidanceFileThatChangedSinceTheRunStarted) {
  Table4Run t;
  auto plan = nlohmann::ordered_json::parse(*util::read_file(t.plan));
  const auto guidance = t.dir.write("guidance.md", "1. Write a kernel contract.\n");
  plan["guidance"]["file"] = guidance.string();
  ASSERT_TRUE(util::write_file_atomic(t.plan, plan.dump(2)));
  ASSERT_EQ(t.start().exit_code, 0);
  auto store = store::RunStore::open_existing(t.run);
  ASSERT_TRUE(store);
  const auto stored = nlohmann::json::parse((*store)->info().config_json);
  EXPECT_EQ(stored["guidance"]["sha256"].get<std::string>().size(), 64u);
  store->reset();
  ASSERT_TRUE(util::write_file_atomic(guidance, "1. Write a kernel contract. Always.\n"));
  auto resumed =
      test_support::run_ptxbench({"run", "--resume", t.run.string(), "--quiet"}, t.cache);
  EXPECT_EQ(resumed.exit_code, 2) << resumed.out << resumed.err;
  EXPECT_NE(resumed.err.find("changed since the run started"), std::string::npos) << resumed.err;
}
