#include "suite/listing.hpp"

#include "suite/recipes.hpp"
#include "trace/json_io.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

namespace ptxbench::suite {
namespace {

using Json = nlohmann::ordered_json;

Json tensor_json(const ResolvedTensor& tensor) {
  Json out = Json::object();
  out["name"] = tensor.name;
  out["dtype"] = std::string(trace::to_string(tensor.dtype));
  out["shape"] = tensor.scalar ? Json(nullptr) : Json(tensor.dims);
  return out;
}

Json inputs_json(const Problem& problem) {
  Json inputs = Json::array();
  for (const ResolvedTensor& tensor : problem.inputs) {
    Json entry = tensor_json(tensor);
    auto recipe = recipe_for(problem.definition, problem.workload, tensor.name);
    entry["distribution"] = recipe ? std::string(to_string(recipe->distribution)) : "none";
    inputs.push_back(std::move(entry));
  }
  return inputs;
}

std::string var_axes_text(const Problem& problem) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : problem.var_axes)
    parts.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string tensors_text(const std::vector<ResolvedTensor>& tensors) {
  std::vector<std::string> parts;
  parts.reserve(tensors.size());
  for (const ResolvedTensor& tensor : tensors)
    parts.push_back(describe_tensor(tensor));
  return fmt::format("{}", fmt::join(parts, ", "));
}

} // namespace

std::string describe_tensor(const ResolvedTensor& tensor) {
  if (tensor.scalar)
    return fmt::format("{} {} (scalar)", tensor.name, trace::to_string(tensor.dtype));
  return fmt::format("{}[{}] {}", tensor.name, fmt::join(tensor.dims, ","),
                     trace::to_string(tensor.dtype));
}

Json problem_json(const Problem& problem) {
  Json out = Json::object();
  out["name"] = problem.name();
  out["op_type"] = problem.definition.op_type;
  out["kind"] = std::string(info(problem.kind).name);
  out["suite"] = problem.suite;
  out["causal"] = problem.mask == Mask::causal;
  out["baseline"] = problem.baseline;
  out["workload_uuid"] = problem.workload.uuid;
  out["var_axes"] = Json::object();
  for (const auto& [name, value] : problem.var_axes)
    out["var_axes"][name] = value;
  out["inputs"] = inputs_json(problem);
  out["outputs"] = Json::array();
  for (const ResolvedTensor& tensor : problem.outputs)
    out["outputs"].push_back(tensor_json(tensor));
  out["flops"] = problem.flops;
  out["io_bytes"] = problem.io_bytes;
  return out;
}

std::string render_problems_json(const Suite& suite) {
  Json out = Json::array();
  for (const Problem& problem : suite.problems())
    out.push_back(problem_json(problem));
  return out.dump(2) + "\n";
}

std::string render_problems_text(const Suite& suite) {
  std::string out = fmt::format("{:<42} {:<10} {:<14} {:>11} {:>10}  {}\n", "NAME", "OP TYPE",
                                "SUITE", "GFLOP", "MB", "BASELINE");
  for (const Problem& problem : suite.problems()) {
    out += fmt::format("{:<42} {:<10} {:<14} {:>11.3f} {:>10.2f}  {}\n", problem.name(),
                       problem.definition.op_type, problem.suite,
                       static_cast<double>(problem.flops) / 1e9,
                       static_cast<double>(problem.io_bytes) / 1e6, problem.baseline);
    out += fmt::format("    {}: {} -> {}\n", var_axes_text(problem), tensors_text(problem.inputs),
                       tensors_text(problem.outputs));
  }
  out += fmt::format("{} problems\n", suite.problems().size());
  return out;
}

} // namespace ptxbench::suite
