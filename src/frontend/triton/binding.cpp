#include "frontend/triton/binding.hpp"

#include "trace/json_io.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

namespace ptxbench::frontend {
namespace {

// The value of one dimension: a constant axis, a variable axis's workload value, or a number.
util::Expected<std::int64_t> dimension_value(const trace::Definition& definition,
                                             const std::string& dim,
                                             const std::vector<std::int64_t>& var_axes) {
  std::size_t variable = 0;
  for (const trace::Axis& axis : definition.axes) {
    const bool is_variable = axis.kind == trace::Axis::Kind::variable;
    if (axis.name == dim) {
      if (!is_variable)
        return axis.value;
      if (variable < var_axes.size())
        return var_axes[variable];
      return util::make_error(util::ErrorKind::invalid_input,
                              "no workload value for the variable axis " + dim);
    }
    variable += is_variable ? 1 : 0;
  }
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(dim.data(), dim.data() + dim.size(), number);
  if (error == std::errc{} && end == dim.data() + dim.size())
    return number;
  return util::make_error(util::ErrorKind::invalid_input,
                          "the dimension `" + dim + "` names no axis of " + definition.name);
}

util::Expected<nlohmann::json> tensor_arg(const trace::Definition& definition,
                                          const trace::TensorSpec& spec, int index,
                                          const std::vector<std::int64_t>& var_axes) {
  nlohmann::json shape = nlohmann::json::array();
  for (const std::string& dim : *spec.shape) {
    PTXBENCH_TRY_ASSIGN(auto value, dimension_value(definition, dim, var_axes));
    shape.push_back(value);
  }
  return nlohmann::json{{"kind", "tensor"},
                        {"index", index},
                        {"shape", std::move(shape)},
                        {"dtype", std::string(trace::to_string(spec.dtype))}};
}

} // namespace

util::Expected<std::string> triton_binding(const trace::Definition& definition,
                                           const std::vector<std::int64_t>& var_axes) {
  nlohmann::json params = nlohmann::json::array(), args = nlohmann::json::array();
  int buffers = 0, scalars = 0, axes = 0;
  auto add_tensors = [&](const std::vector<trace::TensorSpec>& specs) -> util::Status {
    for (const trace::TensorSpec& spec : specs) {
      params.push_back(spec.name);
      if (spec.is_scalar()) {
        args.push_back({{"kind", "scalar"},
                        {"index", scalars++},
                        {"dtype", std::string(trace::to_string(spec.dtype))}});
        continue;
      }
      PTXBENCH_TRY_ASSIGN(auto arg, tensor_arg(definition, spec, buffers++, var_axes));
      args.push_back(std::move(arg));
    }
    return util::Ok{};
  };
  PTXBENCH_TRY(add_tensors(definition.inputs));
  PTXBENCH_TRY(add_tensors(definition.outputs));
  for (const trace::Axis& axis : definition.axes)
    if (axis.kind == trace::Axis::Kind::variable) {
      params.push_back(axis.name);
      args.push_back({{"kind", "axis"}, {"index", axes++}});
    }
  if (static_cast<std::size_t>(axes) != var_axes.size())
    return util::make_error(util::ErrorKind::invalid_input,
                            "the workload gives " + std::to_string(var_axes.size()) +
                                " variable-axis values, the definition has " +
                                std::to_string(axes));
  return nlohmann::json{{"params", std::move(params)}, {"args", std::move(args)}}.dump();
}

} // namespace ptxbench::frontend
