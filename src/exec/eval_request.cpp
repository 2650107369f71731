#include "exec/eval_request.hpp"

#include "util/json_reader.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <span>

namespace ptxbench::exec {
namespace {

using Json = nlohmann::ordered_json;

// Upper bounds that keep one request from holding a GPU for hours.
constexpr std::int64_t kMaxSets = 16;
constexpr std::int64_t kMaxTrials = 100;
constexpr std::int64_t kMaxWarmup = 1000;
constexpr std::int64_t kMaxIterations = 10000;
constexpr double kMaxTimeoutS = 3600;

constexpr std::array<std::string_view, 17> kRequestKeys{
    "version", "language", "solution",   "arch",    "workload_uuids",      "sets",
    "trials",  "warmup",   "iterations", "timeout", "baseline_cache_mode", "sanitizer_types",
    "audit",   "debug",    "reference",  "seed",    "counts_cache"};
// FlashInfer-Trace Solution fields; name, author, spec and description are accepted and not
// used (the service names the solution by its content hash).
constexpr std::array<std::string_view, 6> kSolutionKeys{"definition", "sources", "name",
                                                        "author",     "spec",    "description"};

// Each function below reads part of the body into `in`, which keeps the first problem as
// "<origin>: <JSON path>: <what>"; the messages keep the documented shape in them, since they
// are the 400 body a client reads.

void only_keys(util::JsonReader& in, const Json& object, const std::string& path,
               std::span<const std::string_view> keys) {
  for (const auto& [key, value] : object.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      in.fail(util::key_path(path, key), fmt::format("unknown field \"{}\"", key));
}

// The integer at `key` within [min, max], or `fallback` when absent.
int bounded_int(util::JsonReader& in, const Json& body, std::string_view key, std::int64_t min,
                std::int64_t max, int fallback) {
  const Json* value = util::JsonReader::optional(body, key);
  if (value == nullptr)
    return fallback;
  if (!value->is_number_integer() || value->get<std::int64_t>() < min ||
      value->get<std::int64_t>() > max) {
    in.fail(util::key_path("$", key), fmt::format("\"{}\" must be an integer from {} to {}, got {}",
                                                  key, min, max, value->dump()));
    return fallback;
  }
  return static_cast<int>(value->get<std::int64_t>());
}

struct SourceFile {
  std::string path;
  std::string content;
};

SourceFile single_source(util::JsonReader& in, const Json& solution) {
  const std::string path = "$.solution.sources";
  const Json* sources = util::JsonReader::optional(solution, "sources");
  if (sources == nullptr || !sources->is_array() || sources->size() != 1) {
    in.fail(sources == nullptr ? "$.solution" : path,
            "solution.sources must hold exactly one file: [{\"path\": \"kernel.cu\", "
            "\"content\": \"...\"}]");
    return {};
  }
  const Json& file = (*sources)[0];
  const std::string at = util::index_path(path, 0);
  if (!in.expect_object(file, at))
    return {};
  only_keys(in, file, at, std::array<std::string_view, 2>{"path", "content"});
  SourceFile out;
  out.path = in.optional_string(file, at, "path", util::Emptiness::allowed).value_or("");
  out.content = in.string(file, at, "content", util::Emptiness::allowed);
  if (in.ok() && out.content.empty())
    in.fail(util::key_path(at, "content"), "solution.sources[0].content is empty");
  return out;
}

std::string definition_of(util::JsonReader& in, const Json& solution) {
  const Json* definition = util::JsonReader::optional(solution, "definition");
  if (definition == nullptr || !definition->is_string()) {
    in.fail(definition == nullptr ? "$.solution" : "$.solution.definition",
            "solution.definition must name a problem (GET /definitions lists them)");
    return {};
  }
  return definition->get<std::string>();
}

// The listed workload uuids; nullopt when the body lists none (absent or null).
std::optional<std::vector<std::string>> workload_uuids(util::JsonReader& in, const Json& body) {
  const Json* uuids = util::JsonReader::optional(body, "workload_uuids");
  if (uuids == nullptr || uuids->is_null())
    return std::nullopt;
  if (!uuids->is_array()) {
    in.fail("$.workload_uuids", "\"workload_uuids\" must be a list of strings or null");
    return std::nullopt;
  }
  return in.strings_at(*uuids, "$.workload_uuids", util::Emptiness::allowed);
}

void read_version(util::JsonReader& in, const Json& body) {
  const Json* version = util::JsonReader::optional(body, "version");
  if (version == nullptr)
    return;
  if (!version->is_number_integer() || version->get<std::int64_t>() < 1)
    in.fail("$.version", "\"version\" must be a positive integer, got " + version->dump());
  else if (version->get<std::int64_t>() > kEvalRequestVersion)
    in.fail("$.version", fmt::format("request version {} is newer than this build reads ({}): "
                                     "update ptxbench on the evaluating host",
                                     version->get<std::int64_t>(), kEvalRequestVersion));
}

// The `language` member, or the source path's: kernel.py is Triton, anything else CUDA.
compile::Language read_language(util::JsonReader& in, const Json& body,
                                const std::string& source_path) {
  const Json* language = util::JsonReader::optional(body, "language");
  if (language == nullptr)
    return source_path.ends_with(".py") ? compile::Language::triton : compile::Language::cuda;
  const auto parsed =
      language->is_string() ? compile::parse_language(language->get<std::string>()) : std::nullopt;
  if (!parsed)
    in.fail("$.language", "\"language\" must be \"cuda\" or \"triton\", got " + language->dump());
  return parsed.value_or(compile::Language::cuda);
}

ReferenceTiming reference_timing(util::JsonReader& in, const Json& body) {
  const Json* mode = util::JsonReader::optional(body, "baseline_cache_mode");
  if (mode == nullptr || *mode == "bypass")
    return ReferenceTiming::interleave;
  if (*mode == "reuse")
    return ReferenceTiming::cached;
  in.fail("$.baseline_cache_mode",
          "\"baseline_cache_mode\" must be \"reuse\" (cached reference latency) or "
          "\"bypass\" (time the reference in this evaluation), got " +
              mode->dump());
  return ReferenceTiming::interleave;
}

// "reference": "flashinfer" (the default) or "cudnn": the GQA problems' baseline.
reference::GqaBaseline gqa_reference(util::JsonReader& in, const Json& body) {
  const Json* name = util::JsonReader::optional(body, "reference");
  if (name == nullptr || *name == "flashinfer")
    return reference::GqaBaseline::flashinfer;
  if (*name == "cudnn")
    return reference::GqaBaseline::cudnn;
  in.fail("$.reference",
          "\"reference\" must be \"flashinfer\" or \"cudnn\" (the GQA baseline), got " +
              name->dump());
  return reference::GqaBaseline::flashinfer;
}

// "seed": the inputs' seed (default: a secret one per evaluation); "counts_cache": "on" reuses
// the counts of an earlier evaluation of the same source, kernel.so, seed and GPU.
void read_counts_cache(util::JsonReader& in, const Json& body, EvalOptions& options) {
  if (const Json* seed = util::JsonReader::optional(body, "seed")) {
    if (seed->is_number_unsigned() || (seed->is_number_integer() && seed->get<std::int64_t>() >= 0))
      options.seed = seed->get<std::uint64_t>();
    else
      in.fail("$.seed", "\"seed\" must be an integer from 0 to 2^64-1, got " + seed->dump());
  }
  const Json* use = util::JsonReader::optional(body, "counts_cache");
  if (use == nullptr || *use == "off")
    options.counts_cache = CountsCacheUse::off;
  else if (*use == "on")
    options.counts_cache = CountsCacheUse::on;
  else
    in.fail("$.counts_cache", "\"counts_cache\" must be \"on\" or \"off\", got " + use->dump());
}

void read_tools(util::JsonReader& in, const Json& body, EvalOptions& options) {
  options.sanitize = Sanitize::off;
  if (const Json* types = util::JsonReader::optional(body, "sanitizer_types")) {
    if (*types == Json::array({"memcheck"}))
      options.sanitize = Sanitize::memcheck;
    else if (!(types->is_array() && types->empty()))
      in.fail("$.sanitizer_types", "\"sanitizer_types\": this service runs [\"memcheck\"] only");
  }
  options.audit = Audit::none;
  if (const Json* audit = util::JsonReader::optional(body, "audit")) {
    if (*audit == "ncu")
      options.audit = Audit::ncu;
    else if (!(audit->is_string() && *audit == "none"))
      in.fail("$.audit", "\"audit\" must be \"ncu\" or \"none\", got " + audit->dump());
  }
  options.debug = Debug::off;
  if (const Json* debug = util::JsonReader::optional(body, "debug")) {
    if (!debug->is_boolean())
      in.fail("$.debug", "\"debug\" must be true or false, got " + debug->dump());
    else if (debug->get<bool>())
      options.debug = Debug::cuda_gdb;
  }
}

void read_arch(util::JsonReader& in, const Json& body, EvalOptions& options) {
  const Json* arch = util::JsonReader::optional(body, "arch");
  const auto parsed =
      arch == nullptr
          ? compile::parse_arch("sm_90a")
          : (arch->is_string() ? compile::parse_arch(arch->get<std::string>()) : std::nullopt);
  if (!parsed) {
    in.fail("$.arch", "\"arch\" must be \"sm_90a\" or \"sm_100a\", got " + arch->dump());
    return;
  }
  options.arch = *parsed;
}

void read_options(util::JsonReader& in, const Json& body, EvalOptions& options) {
  read_arch(in, body, options);
  options.sets = bounded_int(in, body, "sets", 1, kMaxSets, options.sets);
  options.trials = bounded_int(in, body, "trials", 1, kMaxTrials, options.trials);
  options.warmup = bounded_int(in, body, "warmup", 0, kMaxWarmup, options.warmup);
  options.iterations = bounded_int(in, body, "iterations", 1, kMaxIterations, options.iterations);
  if (const Json* timeout = util::JsonReader::optional(body, "timeout")) {
    if (!timeout->is_number() || timeout->get<double>() <= 0 ||
        timeout->get<double>() > kMaxTimeoutS)
      in.fail("$.timeout", fmt::format("\"timeout\" must be a number of seconds in (0, {}], got {}",
                                       kMaxTimeoutS, timeout->dump()));
    else
      options.timeout =
          std::chrono::milliseconds(static_cast<long long>(timeout->get<double>() * 1000));
  }
  options.reference_timing = reference_timing(in, body);
  options.gqa_reference = gqa_reference(in, body);
  read_counts_cache(in, body, options);
  read_tools(in, body, options);
}

} // namespace

Json to_json(const EvalRequest& request) {
  const EvalOptions& o = request.options;
  Json out{
      {"version", kEvalRequestVersion},
      {"language", compile::to_string(o.language)},
      {"solution",
       {{"definition", request.problem},
        {"sources", Json::array({{{"path", compile::kernel_file_name(o.language)},
                                  {"content", request.source}}})}}},
      {"arch", compile::to_string(o.arch)},
      {"workload_uuids", request.workload_uuids ? Json(*request.workload_uuids) : Json()},
      {"sets", o.sets},
      {"trials", o.trials},
      {"warmup", o.warmup},
      {"iterations", o.iterations},
      {"timeout", static_cast<double>(o.timeout.count()) / 1000.0},
      {"baseline_cache_mode", o.reference_timing == ReferenceTiming::cached ? "reuse" : "bypass"},
      {"sanitizer_types",
       o.sanitize == Sanitize::memcheck ? Json::array({"memcheck"}) : Json::array()},
      {"audit", o.audit == Audit::ncu ? "ncu" : "none"}};
  // Only when asked for: a build from before `debug` reads every other request as it did.
  if (o.debug == Debug::cuda_gdb)
    out["debug"] = true;
  if (o.gqa_reference == reference::GqaBaseline::cudnn) // likewise
    out["reference"] = "cudnn";
  if (o.seed) // likewise
    out["seed"] = *o.seed;
  if (o.counts_cache == CountsCacheUse::on) // likewise
    out["counts_cache"] = "on";
  return out;
}

util::Expected<EvalRequest> eval_request_from_json(const Json& body, const std::string& origin) {
  util::JsonReader in(origin);
  EvalRequest request;
  if (!body.is_object()) {
    in.fail("$", "expected a JSON object, got " + std::string(body.type_name()));
    return in.finish(std::move(request));
  }
  only_keys(in, body, "$", kRequestKeys);
  read_version(in, body);
  const Json* solution = util::JsonReader::optional(body, "solution");
  if (in.ok() && (solution == nullptr || !solution->is_object()))
    in.fail(solution == nullptr ? "$" : "$.solution",
            "\"solution\" must be an object: {\"definition\": PROBLEM, \"sources\": "
            "[{\"path\": \"kernel.cu\", \"content\": SOURCE}]}");
  if (!in.ok())
    return in.finish(std::move(request));
  only_keys(in, *solution, "$.solution", kSolutionKeys);
  SourceFile file = single_source(in, *solution);
  request.problem = definition_of(in, *solution);
  request.source = std::move(file.content);
  request.workload_uuids = workload_uuids(in, body);
  request.options.language = read_language(in, body, file.path);
  read_options(in, body, request.options);
  return in.finish(std::move(request));
}

bool same_request(const EvalRequest& a, const EvalRequest& b) {
  const EvalOptions& x = a.options;
  const EvalOptions& y = b.options;
  return a.problem == b.problem && a.source == b.source && a.workload_uuids == b.workload_uuids &&
         x.arch == y.arch && x.language == y.language && x.sets == y.sets && x.trials == y.trials &&
         x.warmup == y.warmup && x.iterations == y.iterations && x.timeout == y.timeout &&
         x.reference_timing == y.reference_timing && x.sanitize == y.sanitize &&
         x.audit == y.audit && x.debug == y.debug && x.gqa_reference == y.gqa_reference &&
         x.seed == y.seed && x.counts_cache == y.counts_cache;
}

} // namespace ptxbench::exec
