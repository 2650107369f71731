// The leakage guard (adapt/notes_feedback.hpp): how a notes corpus is split before the index is
// built when runs are held out.
#include "adapt/notes_feedback.hpp"
#include "store/run_store.hpp"
#include "support/scratch_dir.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::adapt;

namespace {

NotesRecord sourced(const std::string& id, const std::string& wrong, const std::string& run,
                    std::int64_t sample, const std::string& repair_run) {
  NotesRecord r;
  r.id = id;
  r.status = "done";
  r.problem = "gemm_n7168_k5120";
  r.wrong_kernel = wrong;
  r.notes.summary = "s";
  for (const char* name : {"a", "b", "c"}) {
    InstructionNote note;
    note.instruction = name;
    r.notes.instruction_notes.push_back(note);
  }
  r.source =
      NotesSource{run, store::TrajectoryKey{"m", "gemm_n7168_k5120", "v", sample}, 0, repair_run};
  return r;
}

std::vector<std::string> ids_of(const std::vector<NotesRecord>& records) {
  std::vector<std::string> ids;
  for (const auto& r : records)
    ids.push_back(r.id);
  return ids;
}

} // namespace

TEST(NotesSplit, HeldOutRunsTakeTheirPairsTheirTrajectoriesAndTheirWrongKernelsWithThem) {
  test_support::ScratchDir dir;
  const std::string held = (dir.path() / "held").string();
  const std::string other = (dir.path() / "other").string();
  std::vector<NotesRecord> corpus{
      sourced("from-held", "kernel A", held, 0, other),
      sourced("repaired-in-held", "kernel B", other, 1, held),
      sourced("same-trajectory", "kernel C", other, 1, other), // shares other/#1 with the above
      sourced("same-kernel", "kernel A", other, 2, other),     // one retrieval group with A
      sourced("kept", "kernel D", other, 3, other),
  };
  const std::vector<std::filesystem::path> held_out{dir.path() / "held" / "."};
  auto split = split_corpus(corpus, held_out);
  ASSERT_TRUE(split) << split.error().message;
  EXPECT_EQ(ids_of(split->kept), std::vector<std::string>{"kept"});
  EXPECT_EQ(split->excluded, 4u);
  auto nothing_held = split_corpus(corpus, {});
  ASSERT_TRUE(nothing_held);
  EXPECT_EQ(nothing_held->kept.size(), corpus.size());
}

TEST(NotesSplit, ACorpusThatDoesNotSayWhereItCameFromCannotBeSplit) {
  std::vector<NotesRecord> corpus{sourced("a", "k", "/runs/x", 0, "/runs/y")};
  corpus.front().source.reset();
  const std::vector<std::filesystem::path> held_out{"/runs/x"};
  auto split = split_corpus(corpus, held_out);
  ASSERT_FALSE(split);
  EXPECT_EQ(split.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(split.error().message.find("notes record a does not say which run"), std::string::npos);
}

TEST(NotesSplit, ProvenanceRoundTripsThroughTheRecordJson) {
  const NotesRecord r = sourced("a", "k", "/runs/x", 3, "/runs/y");
  auto back = notes_record_from_json(to_json(r));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->source);
  EXPECT_EQ(back->source->run_dir, "/runs/x");
  EXPECT_EQ(back->source->trajectory_key, r.source->trajectory_key);
  EXPECT_EQ(back->source->repair_run_dir, "/runs/y");
  Json bad = to_json(r);
  bad["source"]["turn"] = "first";
  auto refused = notes_record_from_json(bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("$.source.turn"), std::string::npos)
      << refused.error().message;
}
