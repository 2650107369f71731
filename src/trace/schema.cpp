#include "trace/schema.hpp"

namespace ptxbench::trace {

const Axis* Definition::find_axis(const std::string& axis_name) const {
  for (const Axis& axis : axes)
    if (axis.name == axis_name)
      return &axis;
  return nullptr;
}

const TensorSpec* Definition::find_input(const std::string& input_name) const {
  for (const TensorSpec& spec : inputs)
    if (spec.name == input_name)
      return &spec;
  return nullptr;
}

std::optional<std::int64_t> Workload::axis_value(const std::string& axis_name) const {
  for (const auto& [name, value] : axes)
    if (name == axis_name)
      return value;
  return std::nullopt;
}

} // namespace ptxbench::trace
