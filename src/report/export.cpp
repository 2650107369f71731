#include "report/export.hpp"

#include "report/text.hpp"
#include "store/enums.hpp"
#include "trace/json_io.hpp"
#include "util/fs.hpp"

#include <fmt/core.h>

namespace ptxbench::report {
namespace {

using Json = nlohmann::ordered_json;
using store::FinishedTurn;
using store::TrajectoryRecord;

constexpr std::string_view kTrajectoryFormat = "mini-swe-agent-1.1";

std::string file_stem(const store::TrajectoryKey& key) {
  std::string stem =
      fmt::format("{}__{}__{}__{}", key.model, key.problem, key.prompt_variant, key.sample);
  for (char& c : stem)
    if (c == '/' || c == '\\' || c == ':' || c == ' ')
      c = '_';
  return stem;
}

std::optional<double> turn_speedup(const FinishedTurn& turn) {
  std::optional<double> best;
  for (const auto& evaluation : turn.evaluations)
    if (evaluation.speedup)
      best = std::max(best.value_or(0.0), *evaluation.speedup);
  return best;
}

Json optional_json(const std::optional<std::string>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json optional_json(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

util::Expected<store::UsageTotals> turn_usage(store::RunStore& store, const FinishedTurn& turn) {
  PTXBENCH_TRY_ASSIGN(auto calls, store.model_calls(turn.id));
  store::UsageTotals usage;
  for (const auto& call : calls) {
    ++usage.calls;
    usage.input_tokens += call.input_tokens;
    usage.output_tokens += call.output_tokens;
    usage.reasoning_tokens += call.reasoning_tokens;
    usage.cost_usd += call.cost_usd;
  }
  return usage;
}

Json observation_extra(const FinishedTurn& turn) {
  Json extra;
  extra["turn"] = turn.index;
  extra["category"] = std::string(store::enum_name(store::kTurnCategories, turn.category));
  extra["speedup"] = optional_json(turn_speedup(turn));
  Json traces = Json::array();
  for (const auto& evaluation : turn.evaluations) {
    extra["static_verdict"] = optional_json(evaluation.static_verdict);
    extra["dynamic_verdict"] = optional_json(evaluation.dynamic_verdict);
    for (const auto& trace : evaluation.traces)
      traces.push_back(trace::to_json(trace));
  }
  extra["traces"] = std::move(traces);
  return extra;
}

Json turn_messages(const FinishedTurn& turn, const store::UsageTotals& usage) {
  Json messages = Json::array();
  if (turn.category == store::TurnCategory::infra || !turn.reply)
    return messages;
  Json usage_json = {{"input_tokens", usage.input_tokens},
                     {"output_tokens", usage.output_tokens},
                     {"reasoning_tokens", usage.reasoning_tokens},
                     {"cost_usd", usage.cost_usd},
                     {"attempts", usage.calls}};
  messages.push_back({{"role", "assistant"},
                      {"content", *turn.reply},
                      {"extra", {{"turn", turn.index}, {"usage", std::move(usage_json)}}}});
  messages.push_back({{"role", "user"},
                      {"content", turn.feedback.value_or("")},
                      {"extra", observation_extra(turn)}});
  return messages;
}

// A trajectory with its finished turns and each turn's model-call totals (read once).
struct Loaded {
  TrajectoryRecord record;
  std::vector<FinishedTurn> turns;
  std::vector<store::UsageTotals> usage; // parallel to `turns`
};

// The kernel of the fastest correct turn (the submission), if any.
std::optional<std::string> submission(const std::vector<FinishedTurn>& turns) {
  const FinishedTurn* best = nullptr;
  for (const auto& turn : turns)
    if (turn.category == store::TurnCategory::correct &&
        (best == nullptr || turn_speedup(turn).value_or(0) > turn_speedup(*best).value_or(0)))
      best = &turn;
  return best != nullptr ? best->kernel_source : std::nullopt;
}

util::Expected<Json> trajectory_json(store::RunStore& store, const Loaded& item) {
  const TrajectoryRecord& record = item.record;
  const std::vector<FinishedTurn>& turns = item.turns;
  PTXBENCH_TRY_ASSIGN(auto prompts, store.prompts(record.id));
  PTXBENCH_TRY_ASSIGN(auto usage, store.usage(record.id));
  std::string exit = record.exit_reason
                         ? std::string(store::enum_name(store::kExitReasons, *record.exit_reason))
                         : "running";
  Json messages = Json::array();
  if (prompts) {
    messages.push_back({{"role", "system"}, {"content", prompts->system}});
    messages.push_back({{"role", "user"}, {"content", prompts->task}});
  }
  for (std::size_t i = 0; i < turns.size(); ++i)
    for (auto& message : turn_messages(turns[i], item.usage[i]))
      messages.push_back(std::move(message));
  std::optional<std::string> submitted = submission(turns);
  messages.push_back({{"role", "exit"}, {"content", exit}, {"extra", {{"exit_status", exit}}}});
  Json config = Json::parse(store.info().config_json, nullptr, false);
  Json info;
  info["exit_status"] = exit;
  info["submission"] = submitted.value_or("");
  info["model_stats"] = {{"instance_cost", usage.cost_usd},
                         {"api_calls", usage.calls},
                         {"input_tokens", usage.input_tokens},
                         {"output_tokens", usage.output_tokens},
                         {"reasoning_tokens", usage.reasoning_tokens}};
  info["config"] = {{"model", {{"model_name", record.key.model}}},
                    {"problem", record.key.problem},
                    {"prompt_variant", record.key.prompt_variant},
                    {"sample", record.key.sample},
                    {"language", trace::to_string(record.key.language)},
                    {"plan", config.is_discarded() ? Json(store.info().config_json) : config}};
  if (!record.key.condition.empty())
    info["config"]["condition"] = record.key.condition;
  info["ptxbench_version"] = store.info().ptxbench_version;
  return Json{{"trajectory_format", kTrajectoryFormat},
              {"info", std::move(info)},
              {"messages", std::move(messages)}};
}

util::Expected<std::vector<Loaded>> load_all(store::RunStore& store) {
  PTXBENCH_TRY_ASSIGN(auto records, store.trajectories());
  std::vector<Loaded> out;
  for (auto& record : records) {
    PTXBENCH_TRY_ASSIGN(auto turns, store.finished_turns(record.id));
    std::vector<store::UsageTotals> usage;
    for (const auto& turn : turns) {
      PTXBENCH_TRY_ASSIGN(auto totals, turn_usage(store, turn));
      usage.push_back(totals);
    }
    out.push_back({std::move(record), std::move(turns), std::move(usage)});
  }
  return out;
}

std::string traces_jsonl(const std::vector<Loaded>& all) {
  std::string out;
  for (const auto& item : all)
    for (const auto& turn : item.turns)
      for (const auto& evaluation : turn.evaluations)
        for (const auto& trace : evaluation.traces)
          out += trace::dump_compact(trace::to_json(trace)) + "\n";
  return out;
}

// Wall time of the compute-sanitizer memcheck passes of a turn's evaluations (ms), from the
// `phases` of each trace's ptxbench extras; nullopt when no trace had one.
std::optional<double> memcheck_ms(const FinishedTurn& turn) {
  std::optional<double> total;
  for (const auto& evaluation : turn.evaluations)
    for (const auto& trace : evaluation.traces) {
      if (!trace.evaluation || !trace.evaluation->ptxbench)
        continue;
      const auto& extras = *trace.evaluation->ptxbench;
      if (!extras.is_object() || !extras.contains("phases") || !extras["phases"].is_object())
        continue;
      const auto& phase = extras["phases"].value("sanitizer_ms", trace::Json());
      if (phase.is_number())
        total = total.value_or(0.0) + phase.get<double>();
    }
  return total;
}

// How the turn's reply ended (complete, truncated, empty); blank when no reply was kept or the
// store predates the column.
std::string reply_end_field(const FinishedTurn& turn) {
  return turn.reply_end ? std::string(store::enum_name(store::kReplyEnds, *turn.reply_end)) : "";
}

std::string turns_csv_of(const std::vector<Loaded>& all) {
  std::string out =
      "model,problem,prompt_variant,trajectory,turn,counted_turn,category,counted,"
      "speedup,static_verdict,dynamic_verdict,input_tokens,output_tokens,"
      "reasoning_tokens,cost_usd,started_at,finished_at,memcheck_ms,reply_end,language,"
      "condition\n";
  for (const auto& item : all) {
    std::int64_t counted = 0;
    for (std::size_t i = 0; i < item.turns.size(); ++i) {
      const FinishedTurn& turn = item.turns[i];
      const store::UsageTotals& usage = item.usage[i];
      bool is_counted = turn.counting == store::Counting::counted;
      counted += is_counted ? 1 : 0;
      std::string static_verdict, dynamic_verdict;
      for (const auto& evaluation : turn.evaluations) {
        static_verdict = evaluation.static_verdict.value_or("");
        dynamic_verdict = evaluation.dynamic_verdict.value_or("");
      }
      const auto& key = item.record.key;
      out +=
          fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                      csv_field(key.model), csv_field(key.problem), csv_field(key.prompt_variant),
                      key.sample, turn.index, is_counted ? std::to_string(counted) : "",
                      store::enum_name(store::kTurnCategories, turn.category), is_counted ? 1 : 0,
                      csv_number(turn_speedup(turn)), csv_field(static_verdict),
                      csv_field(dynamic_verdict), usage.input_tokens, usage.output_tokens,
                      usage.reasoning_tokens, csv_number(usage.cost_usd), turn.started_at,
                      turn.finished_at, csv_number(memcheck_ms(turn)), reply_end_field(turn),
                      trace::to_string(key.language), csv_field(key.condition));
    }
  }
  return out;
}

} // namespace

util::Expected<std::string> turns_csv(store::RunStore& store) {
  PTXBENCH_TRY_ASSIGN(auto all, load_all(store));
  return turns_csv_of(all);
}

util::Expected<ExportedFiles> export_run(store::RunStore& store,
                                         const std::filesystem::path& out_dir) {
  PTXBENCH_TRY_ASSIGN(auto all, load_all(store));
  ExportedFiles files;
  for (const auto& item : all) {
    PTXBENCH_TRY_ASSIGN(auto json, trajectory_json(store, item));
    auto path = out_dir / "trajectories" / (file_stem(item.record.key) + ".json");
    const std::string text =
        json.dump(2, ' ', false, std::decay_t<decltype(json)>::error_handler_t::replace);
    PTXBENCH_TRY(util::write_file_atomic(path, text + "\n"));
    files.trajectories.push_back(path);
  }
  files.traces = out_dir / "traces.jsonl";
  PTXBENCH_TRY(util::write_file_atomic(files.traces, traces_jsonl(all)));
  files.turns_csv = out_dir / "turns.csv";
  PTXBENCH_TRY(util::write_file_atomic(files.turns_csv, turns_csv_of(all)));
  return files;
}

} // namespace ptxbench::report
