#include "rollout/rollouts.hpp"

#include "agent/plan.hpp"
#include "agent/prompt.hpp"
#include "frontend/frontend.hpp"
#include "store/run_store.hpp"
#include "trace/json_io.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <set>
#include <sys/file.h>
#include <tuple>
#include <unistd.h>

#ifndef PTXBENCH_VERSION
#define PTXBENCH_VERSION "unknown"
#endif

namespace ptxbench::rollout {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kFolderChars = 8; // hex digits of the loop settings' hash

util::Error conflict(std::string what) {
  return util::make_error(util::ErrorKind::conflict, std::move(what));
}

util::Error unknown(const std::string& id) {
  return util::make_error(util::ErrorKind::not_found, fmt::format("no rollout {}", id));
}

// The model client of one step: its one answer is the caller's reply, recorded as the loop
// records any model call (the reply, reasoning and token counts reach the store's model-call row).
class ReplyClient final : public model::ModelClient {
public:
  ReplyClient(std::string model, const Reply& reply, bool& asked)
      : m_model(std::move(model)), m_reply(reply), m_asked(asked) {}

  util::Expected<model::ChatResponse> complete(const model::ChatRequest& request) override {
    if (m_asked)
      return util::make_error(util::ErrorKind::invalid_input,
                              "a rollout step answers one model call only");
    m_asked = true;
    model::ChatResponse response;
    response.text = m_reply.text;
    response.reasoning = m_reply.reasoning;
    response.finish_reason = m_reply.finish_reason;
    response.usage.input_tokens = m_reply.input_tokens;
    response.usage.output_tokens = m_reply.output_tokens;
    if (request.on_attempt) {
      model::AttemptRecord record;
      record.provider = "rollout";
      record.model = m_model;
      record.started_at = std::chrono::system_clock::now();
      std::string messages;
      for (const auto& message : request.messages)
        messages += message.content;
      record.request_sha256 = util::sha256_hex(messages);
      record.response = &response;
      request.on_attempt(record);
    }
    return response;
  }
  std::string_view provider() const override { return "rollout"; }
  const std::string& model_name() const override { return m_model; }

private:
  std::string m_model;
  const Reply& m_reply;
  bool& m_asked;
};

// The plan a rollout folder's store keeps: the loop settings its rollouts share. Models and
// problems vary per rollout; the first rollout's are recorded.
agent::RunPlan folder_plan(const RolloutSpec& spec, const RolloutDeps& deps) {
  agent::RunPlan plan;
  plan.models = {spec.model};
  plan.problems = {spec.prompt.problem};
  plan.prompt_variants = {spec.prompt.variant};
  plan.trajectories = 1;
  plan.jobs = 1;
  plan.loop.arch = spec.prompt.arch;
  plan.loop.language = spec.prompt.language;
  plan.loop.max_turns = spec.max_turns;
  plan.loop.target_speedup = spec.target_speedup;
  plan.loop.context = spec.context;
  plan.loop.eval_attempts = deps.eval_attempts;
  plan.loop.eval_retry_delay = deps.eval_retry_delay;
  return plan;
}

// The settings that name a folder (the plan's loop part only).
std::string folder_of(const RolloutSpec& spec) {
  const std::string settings = fmt::format(
      "{}|{}|{}|{}|{}", compile::to_string(spec.prompt.arch),
      compile::to_string(spec.prompt.language), spec.max_turns,
      spec.target_speedup ? fmt::format("{:.17g}", *spec.target_speedup) : std::string("none"),
      agent::to_string(spec.context));
  return util::sha256_hex(settings).substr(0, kFolderChars);
}

bool is_folder_name(std::string_view name) {
  return name.size() == kFolderChars && std::ranges::all_of(name, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

TurnView turn_view(const store::FinishedTurn& turn) {
  TurnView view;
  view.index = turn.index;
  view.category = turn.category;
  view.counted = turn.counting == store::Counting::counted;
  view.feedback = turn.feedback.value_or("");
  view.infra_reason = turn.infra_reason.value_or("");
  if (turn.evaluations.empty())
    return view;
  const store::StoredEvaluation& evaluation = turn.evaluations.back();
  view.speedup = turn.category == store::TurnCategory::correct ? evaluation.speedup : std::nullopt;
  view.static_verdict = evaluation.static_verdict;
  view.dynamic_verdict = evaluation.dynamic_verdict;
  // The first workload that did not pass names the status; all passed: PASSED.
  for (const trace::Trace& trace : evaluation.traces) {
    if (!trace.evaluation)
      continue;
    const auto status = trace.evaluation->status;
    if (!view.status || status != trace::EvaluationStatus::passed)
      view.status = std::string(trace::to_string(status));
    if (status != trace::EvaluationStatus::passed)
      break;
  }
  return view;
}

// Marks one rollout as stepping for a scope; a second step of it at once is a conflict.
class SteppingMark {
public:
  SteppingMark(std::mutex& mutex, std::set<std::string>& stepping, std::string id)
      : m_mutex(mutex), m_stepping(stepping), m_id(std::move(id)) {
    std::lock_guard lock(m_mutex);
    m_taken = m_stepping.insert(m_id).second;
  }
  ~SteppingMark() {
    if (!m_taken)
      return;
    std::lock_guard lock(m_mutex);
    m_stepping.erase(m_id);
  }
  SteppingMark(const SteppingMark&) = delete;
  SteppingMark& operator=(const SteppingMark&) = delete;
  bool taken() const { return m_taken; }

private:
  std::mutex& m_mutex;
  std::set<std::string>& m_stepping;
  std::string m_id;
  bool m_taken = false;
};

} // namespace

// What a folder holds, kept in memory (one server owns the root): each trajectory's key by id,
// and the next sample of each (model, problem, variant, language), so that neither a step nor a
// create reads every trajectory of the folder.
struct FolderIndex {
  std::map<std::int64_t, store::TrajectoryKey> keys;
  std::map<std::tuple<std::string, std::string, std::string, trace::Language>, std::int64_t>
      next_sample;

  void add(std::int64_t id, const store::TrajectoryKey& key) {
    keys[id] = key;
    std::int64_t& next = next_sample[{key.model, key.problem, key.prompt_variant, key.language}];
    next = std::max(next, key.sample + 1);
  }
};

struct Rollouts::State {
  RolloutDeps deps;
  int lock_fd = -1;
  std::mutex mutex; // the maps below and sample numbering
  std::map<std::string, std::unique_ptr<store::RunStore>> stores; // by folder name
  std::map<std::string, agent::RunPlan> plans;                    // by folder name
  std::map<std::string, FolderIndex> indexes;                     // by folder name
  std::set<std::string> stepping;                                 // rollout ids mid-step
  std::set<std::atomic<bool>*> cancels;                           // of the steps in flight
  bool stopping = false;

  ~State() {
    if (lock_fd >= 0)
      ::close(lock_fd);
  }

  struct Located {
    std::string folder;
    store::RunStore* store = nullptr;
    const agent::RunPlan* plan = nullptr;
    store::TrajectoryId id;
    store::TrajectoryKey key;
  };

  util::Expected<store::RunStore*> open_folder(const std::string& folder,
                                               const RolloutSpec* creating);
  util::Expected<Located> locate(const std::string& id);
  util::Expected<RolloutView> view(const Located& at, std::int64_t first_new_turn);
  util::Expected<std::vector<model::Message>> opening(const PromptSpec& spec) const;
  std::string resolve_variant(const PromptSpec& spec) const;
  std::string live_device(compile::Arch arch) const {
    return deps.live_device ? deps.live_device(arch) : std::string();
  }
  util::Expected<RolloutView> advance(const std::string& id, const Reply* reply);
  // The reply of the rollout's last finished turn, or nullopt.
  std::optional<std::string> last_reply(const Located& at) {
    auto finished = at.store->finished_turns(at.id);
    if (!finished || finished->empty())
      return std::nullopt;
    return finished->back().reply;
  }
};

// Under `mutex`. The store of `folder`, opened (and, with `creating`, made) on first use.
util::Expected<store::RunStore*> Rollouts::State::open_folder(const std::string& folder,
                                                              const RolloutSpec* creating) {
  if (auto found = stores.find(folder); found != stores.end())
    return found->second.get();
  const fs::path dir = deps.root / folder;
  std::unique_ptr<store::RunStore> store;
  if (creating != nullptr) {
    const std::string config = agent::plan_to_json(folder_plan(*creating, deps)).dump();
    PTXBENCH_TRY_ASSIGN(auto opened,
                        store::RunStore::open(dir, store::RunInfo{config, PTXBENCH_VERSION, {}}));
    store = std::move(opened);
  } else {
    if (!fs::exists(dir / store::RunStore::kDatabaseName))
      return util::make_error(util::ErrorKind::not_found, "no rollout folder " + folder);
    PTXBENCH_TRY_ASSIGN(auto opened, store::RunStore::open_existing(dir));
    store = std::move(opened);
  }
  PTXBENCH_TRY_ASSIGN(auto plan, agent::parse_plan(store->info().config_json, dir));
  PTXBENCH_TRY_ASSIGN(auto trajectories, store->trajectories());
  FolderIndex& index = indexes[folder];
  for (const store::TrajectoryRecord& record : trajectories)
    index.add(record.id.value, record.key);
  plans.emplace(folder, std::move(plan));
  return stores.emplace(folder, std::move(store)).first->second.get();
}

util::Expected<Rollouts::State::Located> Rollouts::State::locate(const std::string& id) {
  const std::size_t dash = id.find('-');
  if (dash == std::string::npos || !is_folder_name(std::string_view(id).substr(0, dash)))
    return unknown(id);
  std::int64_t trajectory = 0;
  const char* first = id.data() + dash + 1;
  const char* last = id.data() + id.size();
  auto [end, error] = std::from_chars(first, last, trajectory);
  if (error != std::errc{} || end != last || first == last || trajectory <= 0)
    return unknown(id);
  Located at;
  at.folder = id.substr(0, dash);
  std::lock_guard lock(mutex);
  auto store = open_folder(at.folder, nullptr);
  if (!store)
    return store.error().kind == util::ErrorKind::not_found ? unknown(id) : store.error();
  at.store = *store;
  at.plan = &plans.at(at.folder);
  const FolderIndex& index = indexes.at(at.folder);
  const auto found = index.keys.find(trajectory);
  if (found == index.keys.end())
    return unknown(id);
  at.id = store::TrajectoryId{trajectory};
  at.key = found->second;
  return at;
}

std::string Rollouts::State::resolve_variant(const PromptSpec& spec) const {
  if (spec.variant != "default")
    return spec.variant;
  auto problem = deps.suite->find(spec.problem);
  return problem ? agent::default_variant(*deps.manifest, **problem, frontend::of(spec.language))
                 : spec.variant;
}

util::Expected<std::vector<model::Message>> Rollouts::State::opening(const PromptSpec& spec) const {
  PTXBENCH_TRY_ASSIGN(const suite::Problem* problem, deps.suite->find(spec.problem));
  PTXBENCH_TRY_ASSIGN(
      auto prompts, agent::build_prompts(*problem, spec.arch, *deps.manifest, resolve_variant(spec),
                                         live_device(spec.arch), frontend::of(spec.language)));
  return agent::conversation({prompts.system, prompts.task}, {}, agent::ContextPolicy::full);
}

util::Expected<RolloutView> Rollouts::State::view(const Located& at, std::int64_t first_new_turn) {
  RolloutView out;
  out.id = fmt::format("{}-{}", at.folder, at.id.value);
  out.run_dir = deps.root / at.folder;
  out.trajectory = at.id.value;
  out.sample = at.key.sample;
  out.spec.model = at.key.model;
  out.spec.prompt.problem = at.key.problem;
  out.spec.prompt.variant = at.key.prompt_variant;
  out.spec.prompt.arch = at.plan->loop.arch;
  out.spec.prompt.language = at.plan->loop.language;
  out.spec.max_turns = at.plan->loop.max_turns;
  out.spec.target_speedup = at.plan->loop.target_speedup;
  out.spec.context = at.plan->loop.context;
  PTXBENCH_TRY_ASSIGN(auto record, at.store->find_trajectory(at.key));
  if (record && record->status == store::TrajectoryStatus::finished) {
    out.done = true;
    out.exit = record->exit_reason;
  }
  PTXBENCH_TRY_ASSIGN(auto finished, at.store->finished_turns(at.id));
  PTXBENCH_TRY_ASSIGN(auto prompts, at.store->prompts(at.id));
  if (!prompts)
    return util::make_error(util::ErrorKind::io,
                            fmt::format("rollout {} has no prompts in its store", out.id));
  out.messages = agent::conversation(*prompts, finished, at.plan->loop.context);
  for (const store::FinishedTurn& turn : finished) {
    TurnView turn_seen = turn_view(turn);
    if (turn_seen.counted)
      ++out.counted_turns;
    if (turn.index >= first_new_turn)
      out.stepped.push_back(turn_seen);
    out.turns.push_back(std::move(turn_seen));
  }
  out.awaiting_retry = !out.done && !finished.empty() &&
                       finished.back().category == store::TurnCategory::infra &&
                       finished.back().reply.has_value();
  return out;
}

Rollouts::Rollouts(std::unique_ptr<State> state) : m_state(std::move(state)) {}
Rollouts::~Rollouts() = default;

util::Expected<std::unique_ptr<Rollouts>> Rollouts::open(RolloutDeps deps) {
  if (deps.suite == nullptr || deps.manifest == nullptr || !deps.executor)
    throw util::Fatal("Rollouts::open: missing suite, manifest or executor");
  std::error_code error;
  fs::create_directories(deps.root, error);
  if (error)
    return util::make_error(
        util::ErrorKind::io,
        fmt::format("cannot make the rollout folder {}: {}", deps.root.string(), error.message()));
  auto state = std::make_unique<State>();
  state->lock_fd = ::open((deps.root / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (state->lock_fd < 0)
    return util::make_error(util::ErrorKind::io,
                            fmt::format("cannot open {}/lock", deps.root.string()));
  if (::flock(state->lock_fd, LOCK_EX | LOCK_NB) != 0)
    return util::make_error(util::ErrorKind::conflict,
                            fmt::format("the rollout folder {} is used by another server (one "
                                        "server per folder: give this one its own --rollouts)",
                                        deps.root.string()));
  state->deps = std::move(deps);
  return std::unique_ptr<Rollouts>(new Rollouts(std::move(state)));
}

void Rollouts::stop() {
  std::lock_guard lock(m_state->mutex);
  m_state->stopping = true;
  for (std::atomic<bool>* cancel : m_state->cancels)
    *cancel = true;
}

const fs::path& Rollouts::root() const {
  return m_state->deps.root;
}

util::Expected<std::vector<model::Message>> Rollouts::prompt(const PromptSpec& spec) const {
  return m_state->opening(spec);
}

util::Expected<RolloutView> Rollouts::create(const RolloutSpec& given) {
  State& s = *m_state;
  if (given.max_turns < 1 || given.max_turns > kMaxTurns)
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("max_turns must be 1..{}", kMaxTurns));
  RolloutSpec spec = given;
  spec.prompt.variant = s.resolve_variant(spec.prompt);
  PTXBENCH_TRY_ASSIGN(const suite::Problem* problem, s.deps.suite->find(spec.prompt.problem));
  PTXBENCH_TRY_ASSIGN(auto prompts,
                      agent::build_prompts(*problem, spec.prompt.arch, *s.deps.manifest,
                                           spec.prompt.variant, s.live_device(spec.prompt.arch),
                                           frontend::of(spec.prompt.language)));
  State::Located at;
  at.folder = folder_of(spec);
  std::lock_guard lock(s.mutex); // sample numbering: one creator at a time
  PTXBENCH_TRY_ASSIGN(at.store, s.open_folder(at.folder, &spec));
  at.plan = &s.plans.at(at.folder);
  at.key = store::TrajectoryKey{spec.model, spec.prompt.problem, spec.prompt.variant, 0,
                                compile::to_trace(spec.prompt.language)};
  FolderIndex& index = s.indexes.at(at.folder);
  at.key.sample =
      index.next_sample[{at.key.model, at.key.problem, at.key.prompt_variant, at.key.language}];
  PTXBENCH_TRY_ASSIGN(at.id, at.store->open_trajectory(at.key));
  PTXBENCH_TRY(at.store->set_prompts(at.id, {prompts.system, prompts.task}));
  index.add(at.id.value, at.key);
  return s.view(at, std::numeric_limits<std::int64_t>::max());
}

util::Expected<RolloutView> Rollouts::get(const std::string& id) {
  PTXBENCH_TRY_ASSIGN(auto at, m_state->locate(id));
  return m_state->view(at, std::numeric_limits<std::int64_t>::max());
}

// One turn of the loop: `reply` answers its model call, or (null: a retry) the kept reply is
// evaluated again and no model call may happen. The loop stops after that turn.
util::Expected<RolloutView> Rollouts::State::advance(const std::string& id, const Reply* reply) {
  PTXBENCH_TRY_ASSIGN(auto at, locate(id));
  SteppingMark mark(mutex, stepping, id);
  if (!mark.taken())
    return conflict(fmt::format("rollout {} is taking a step already", id));
  std::atomic<bool> stop{false};
  {
    std::lock_guard lock(mutex);
    if (stopping)
      return util::make_error(util::ErrorKind::unsupported, "the server is stopping");
    cancels.insert(&stop);
  }
  struct Unlist {
    State& state;
    std::atomic<bool>* flag;
    ~Unlist() {
      std::lock_guard lock(state.mutex);
      state.cancels.erase(flag);
    }
  } unlist{*this, &stop};
  PTXBENCH_TRY_ASSIGN(auto before, view(at, 0));
  const auto finished = static_cast<std::int64_t>(before.turns.size());
  if (reply != nullptr && reply->seen_turns && *reply->seen_turns != finished) {
    if (*reply->seen_turns + 1 == finished && last_reply(at) == reply->text)
      return view(at, finished - 1); // a resent step that landed: its answer again
    return conflict(fmt::format("rollout {} has {} finished turns, not the {} the step was "
                                "sent after",
                                id, finished, *reply->seen_turns));
  }
  if (before.done)
    return conflict(fmt::format("rollout {} has ended ({}); start another", id,
                                before.exit ? store::to_string(*before.exit) : "finished"));
  if (reply != nullptr && before.awaiting_retry)
    return conflict(fmt::format("rollout {}: the evaluator could not judge the last reply; "
                                "retry it (POST /v1/rollouts/{}/retry) before the next one",
                                id, id));
  if (reply == nullptr && !before.awaiting_retry)
    return conflict(fmt::format("rollout {} has no reply waiting to be evaluated again", id));
  PTXBENCH_TRY_ASSIGN(const suite::Problem* problem, deps.suite->find(at.key.problem));
  model::ModelSpec model;
  model.name = at.key.model;
  model.provider = "rollout";
  PTXBENCH_TRY_ASSIGN(auto prompts, at.store->prompts(at.id));
  if (!prompts)
    return util::make_error(util::ErrorKind::io,
                            fmt::format("rollout {} has no prompts in its store", id));
  agent::TrajectoryTask task;
  task.key = at.key;
  task.problem = problem;
  task.model = &model;
  task.prompts = agent::Prompts{prompts->system, prompts->task, ""};
  const Reply none;
  bool asked = reply == nullptr; // a retry's client must not be asked
  agent::LoopDeps loop;
  loop.store = at.store;
  loop.executor = &deps.executor(at.plan->loop.language);
  loop.cancel = &stop;
  loop.on_turn = [&stop](const agent::TurnEvent&) { stop = true; };
  loop.make_client = [&](std::int64_t) -> util::Expected<std::unique_ptr<model::ModelClient>> {
    return std::unique_ptr<model::ModelClient>(
        std::make_unique<ReplyClient>(model.name, reply != nullptr ? *reply : none, asked));
  };
  loop.frontend = &frontend::of(at.plan->loop.language);
  PTXBENCH_TRY(agent::run_trajectory(task, at.plan->loop, loop));
  return view(at, finished);
}

util::Expected<RolloutView> Rollouts::step(const std::string& id, const Reply& reply) {
  return m_state->advance(id, &reply);
}

util::Expected<RolloutView> Rollouts::retry(const std::string& id) {
  return m_state->advance(id, nullptr);
}

util::Expected<RolloutView> Rollouts::close(const std::string& id) {
  State& s = *m_state;
  PTXBENCH_TRY_ASSIGN(auto at, s.locate(id));
  SteppingMark mark(s.mutex, s.stepping, id);
  if (!mark.taken())
    return conflict(fmt::format("rollout {} is taking a step", id));
  PTXBENCH_TRY_ASSIGN(auto current, s.view(at, 0));
  if (!current.done)
    PTXBENCH_TRY(at.store->finish_trajectory(at.id, store::ExitReason::cancelled));
  return s.view(at, std::numeric_limits<std::int64_t>::max());
}

} // namespace ptxbench::rollout
