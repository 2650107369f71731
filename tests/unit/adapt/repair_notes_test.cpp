// The notes stage against a reviewer on loopback: the checks on a reply (3–8 notes, required
// fields, no "..." in examples, fenced or bare JSON), calls recorded with their tokens, a reply
// that is not JSON retried and then recorded failed (and run again by the next call), and a
// resume after SIGKILL that leaves one done record per pair.
#include "adapt/notes_stage.hpp"
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

nlohmann::json note_json(int i) {
  return {{"instruction", "wgmma.mma_async " + std::to_string(i)},
          {"shape_context", "m64n128k16 bf16"},
          {"correct_example", "wgmma.fence.sync.aligned;"},
          {"wrong_example", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {d}, a, b;"},
          {"operand_contract", {"descriptor aligned"}},
          {"required_sequence", {"fence", "mma", "commit", "wait"}},
          {"diagnostics", {"wrong numbers"}},
          {"do_not_do", {"skip the fence"}},
          {"example_completeness", "complete"},
          {"missing_details", nlohmann::json::array()}};
}

nlohmann::json notes_json(int count, const std::string& mark = "") {
  nlohmann::json list = nlohmann::json::array();
  for (int i = 0; i < count; ++i)
    list.push_back(note_json(i));
  return {{"summary", "The fence was missing " + mark},
          {"instruction_notes", list},
          {"tags", {"wgmma"}}};
}

struct NotesFixture {
  ScratchDir dir;
  std::function<std::string(int mark)> reply;
  std::atomic<int> calls{0};
  LoopbackServer server;
  model::ModelRegistry registry;
  std::unique_ptr<model::HttpTransport> transport = model::make_curl_transport();

  explicit NotesFixture(std::function<std::string(int)> r)
      : reply(std::move(r)),
        server([this](int, const httplib::Request& q, httplib::Response& response) {
          ++calls;
          reply_json(response, chat_body(reply(mark_of(q)), ChatUsage{1000, 300}));
        }) {
    auto loaded = model::load_registry(write_priced_registry(dir, server.base_url()));
    if (!loaded)
      throw util::Fatal(loaded.error().message);
    registry = std::move(*loaded);
    write_records(notes_paths(dir.path()).input, std::vector{pair(0), pair(1)});
  }
  util::Expected<NotesResult> run(int max_passes = 2) {
    NotesDeps deps;
    deps.registry = &registry;
    deps.client.transport = transport.get();
    return run_notes(NotesOptions{dir.path(), "loop", 2, max_passes}, deps);
  }
  std::map<std::string, NotesRecord> records() const {
    std::map<std::string, NotesRecord> out;
    for (const Json& line : read_lines(notes_paths(dir.path()).output)) {
      auto record = notes_record_from_json(line);
      EXPECT_TRUE(record) << record.error().message;
      EXPECT_TRUE(out.emplace(record->id, *record).second) << "two records of " << record->id;
    }
    return out;
  }
};

} // namespace

TEST(RepairNotes, ReplyInAJsonFenceIsAccepted) {
  auto notes = parse_repair_notes("Here:\n```json\n" + notes_json(3).dump(2) + "\n```\n");
  ASSERT_TRUE(notes) << notes.error().message;
  EXPECT_EQ(notes->instruction_notes.size(), 3u);
  EXPECT_EQ(notes->instruction_notes[2].instruction, "wgmma.mma_async 2");
  EXPECT_EQ(notes->tags, std::vector<std::string>{"wgmma"});
  EXPECT_EQ(nlohmann::json::parse(to_json(*notes).dump()), notes_json(3));
}

TEST(RepairNotes, RefusesTooFewOrTooManyNotes) {
  auto two = parse_repair_notes(notes_json(2).dump());
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().kind, util::ErrorKind::bad_response);
  EXPECT_NE(two.error().message.find("has 2 notes; 3 to 8"), std::string::npos);
  EXPECT_FALSE(parse_repair_notes(notes_json(9).dump()));
  EXPECT_TRUE(parse_repair_notes(notes_json(8).dump()));
}

TEST(RepairNotes, RefusesEllipsisInAnExampleAndAMissingField) {
  auto json = notes_json(3);
  json["instruction_notes"][1]["correct_example"] = "wgmma.fence; ... wait_group 0;";
  auto dots = parse_repair_notes(json.dump());
  ASSERT_FALSE(dots);
  EXPECT_NE(dots.error().message.find("$.instruction_notes[1].correct_example: abbreviates code"),
            std::string::npos)
      << dots.error().message;
  json = notes_json(3);
  json["instruction_notes"][0].erase("do_not_do");
  auto missing = parse_repair_notes(json.dump());
  ASSERT_FALSE(missing);
  EXPECT_NE(
      missing.error().message.find("$.instruction_notes[0]: missing required key \"do_not_do\""),
      std::string::npos)
      << missing.error().message;
  json = notes_json(3);
  json.erase("summary");
  EXPECT_FALSE(parse_repair_notes(json.dump()));
  EXPECT_FALSE(parse_repair_notes("I could not find anything."));
}

TEST(RepairNotes, PromptShowsTheWrongKernelItsFeedbackAndTheFixedKernel) {
  const PairRecord p = pair(4);
  const NotesPrompt prompt = notes_prompt(p);
  EXPECT_NE(prompt.system.find("senior CUDA kernel reviewer"), std::string::npos);
  const auto wrong = prompt.user.find("## Error kernel\n\n```cuda\n// wrong kernel 4");
  const auto feedback = prompt.user.find(p.failure.feedback);
  const auto fixed = prompt.user.find("## Fixed kernel\n\n```cuda\n// repaired kernel MARK-4");
  ASSERT_NE(wrong, std::string::npos);
  ASSERT_NE(feedback, std::string::npos);
  ASSERT_NE(fixed, std::string::npos);
  EXPECT_LT(wrong, feedback);
  EXPECT_LT(feedback, fixed);
  EXPECT_NE(prompt.user.find("3 to 8 notes"), std::string::npos);
}

TEST(NotesStage, WritesOneDoneRecordPerPairWithItsCallsAndTokens) {
  NotesFixture f([](int mark) { return notes_json(3, "MARK-" + std::to_string(mark)).dump(); });
  auto result = f.run();
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->done, 2u);
  const auto records = f.records();
  ASSERT_EQ(records.size(), 2u);
  const NotesRecord& r = records.at(pair(1).id);
  EXPECT_EQ(r.status, "done");
  EXPECT_EQ(r.problem, "gemm_n7168_k5120");
  EXPECT_EQ(r.wrong_kernel, pair(1).failure.kernel_source);
  EXPECT_EQ(r.fixed_kernel, pair(1).repaired_kernel);
  EXPECT_EQ(r.notes.summary, "The fence was missing MARK-1");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].input_tokens, 1000);
  EXPECT_EQ(r.calls[0].output_tokens, 300);
  EXPECT_EQ(r.calls[0].attempts, 1);
  EXPECT_NEAR(*r.cost_usd, (1000 * 1.0 + 300 * 2.0) / 1e6, 1e-12);
  // A second call has nothing to do and rewrites nothing.
  const auto before = *util::read_file(notes_paths(f.dir.path()).output);
  auto again = f.run();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->already_done, 2u);
  EXPECT_EQ(f.calls.load(), 2);
  EXPECT_EQ(*util::read_file(notes_paths(f.dir.path()).output), before);
}

TEST(NotesStage, AReplyThatIsNotJsonIsRetriedThenRecordedFailedAndRunAgainLater) {
  std::atomic<bool> good{false};
  NotesFixture f([&](int mark) {
    return mark == 0 && !good ? std::string("Sorry, here are my thoughts in prose.")
                              : notes_json(4).dump();
  });
  auto result = f.run(/*max_passes=*/2);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->done, 1u);
  EXPECT_EQ(result->failed, 1u);
  const NotesRecord failed = f.records().at(pair(0).id);
  EXPECT_EQ(failed.status, "failed");
  ASSERT_EQ(failed.calls.size(), 2u);
  EXPECT_NE(failed.calls[0].error.find("no JSON object"), std::string::npos) << failed.error;
  EXPECT_EQ(failed.input_tokens, 2000); // both refused replies were paid for
  EXPECT_NE(failed.error.find("pass 2:"), std::string::npos) << failed.error;
  good = true;
  auto rerun = f.run();
  ASSERT_TRUE(rerun) << rerun.error().message;
  EXPECT_EQ(rerun->already_done, 1u);
  EXPECT_EQ(rerun->done, 1u);
  const auto records = f.records();
  EXPECT_EQ(records.at(pair(0).id).status, "done");
  EXPECT_EQ(records.size(), 2u);
}

TEST(NotesStage, MissingPairsSaysWhichStageToRun) {
  NotesFixture f([](int) { return std::string(); });
  std::filesystem::remove(notes_paths(f.dir.path()).input);
  auto result = f.run();
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("run the pairs stage first"), std::string::npos);
}

TEST(NotesCli, AResumeAfterSigkillLeavesOneDoneRecordPerPair) {
  ScratchDir dir;
  ScratchDir cache;
  std::atomic<bool> hang{true};
  std::unique_ptr<LoopbackServer> server;
  server = std::make_unique<LoopbackServer>(
      [&](int index, const httplib::Request&, httplib::Response& response) {
        if (index >= 2 && hang.load()) {
          server->hold(std::chrono::seconds(60));
          return reply_json(response, {{"error", {{"message", "gone"}}}}, 503);
        }
        reply_json(response, chat_body(notes_json(3).dump()));
      });
  const auto registry = write_priced_registry(dir, server->base_url());
  const std::vector<PairRecord> pairs{pair(0), pair(1), pair(2), pair(3)};
  write_records(notes_paths(dir.path()).input, pairs);
  const std::vector<std::string> args{"fixit",           "notes",         dir.path().string(),
                                      "--model",         "loop",          "--registry",
                                      registry.string(), "--concurrency", "1"};
  auto killed =
      test_support::run_ptxbench(args, std::chrono::seconds(8), {test_support::cache_env(cache)});
  ASSERT_TRUE(killed) << killed.error().message;
  EXPECT_TRUE(killed->timed_out);
  const auto output = notes_paths(dir.path()).output;
  ASSERT_EQ(read_lines(output).size(), 2u);
  ASSERT_TRUE(util::append_line(output, R"({"id": "torn", "status": "do)"));
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
