// Spellings of the persisted enums. One descriptor table per enum, in value order, checked
// complete at compile time: a new enumerator without a row fails to build.
#include "trace/json_io.hpp"

#include <array>
#include <cstddef>

namespace ptxbench::trace {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t bits;
};

constexpr std::array kDTypes{
    DTypeInfo{DType::float32, "float32", 32},
    DTypeInfo{DType::float16, "float16", 16},
    DTypeInfo{DType::bfloat16, "bfloat16", 16},
    DTypeInfo{DType::float8_e4m3fn, "float8_e4m3fn", 8},
    DTypeInfo{DType::float8_e5m2, "float8_e5m2", 8},
    DTypeInfo{DType::float4_e2m1, "float4_e2m1", 4},
    DTypeInfo{DType::int64, "int64", 64},
    DTypeInfo{DType::int32, "int32", 32},
    DTypeInfo{DType::int16, "int16", 16},
    DTypeInfo{DType::int8, "int8", 8},
    DTypeInfo{DType::boolean, "bool", 8},
};

template <typename Enum> struct Named {
  Enum value;
  std::string_view name;
};

constexpr std::array kStatuses{
    Named<EvaluationStatus>{EvaluationStatus::passed, "PASSED"},
    Named<EvaluationStatus>{EvaluationStatus::incorrect_shape, "INCORRECT_SHAPE"},
    Named<EvaluationStatus>{EvaluationStatus::incorrect_numerical, "INCORRECT_NUMERICAL"},
    Named<EvaluationStatus>{EvaluationStatus::incorrect_dtype, "INCORRECT_DTYPE"},
    Named<EvaluationStatus>{EvaluationStatus::runtime_error, "RUNTIME_ERROR"},
    Named<EvaluationStatus>{EvaluationStatus::compile_error, "COMPILE_ERROR"},
    Named<EvaluationStatus>{EvaluationStatus::timeout, "TIMEOUT"},
};

constexpr std::array kLanguages{
    Named<Language>{Language::python, "python"},     Named<Language>{Language::triton, "triton"},
    Named<Language>{Language::cpp, "cpp"},           Named<Language>{Language::cuda, "cuda"},
    Named<Language>{Language::tilelang, "tilelang"},
};

// Binding starts at none = 0; "ptxbench" is our own binding (docs/abi.md).
constexpr std::array kBindings{
    Named<Binding>{Binding::none, ""},
    Named<Binding>{Binding::tvm_ffi, "tvm-ffi"},
    Named<Binding>{Binding::torch, "torch"},
    Named<Binding>{Binding::ptxbench, "ptxbench"},
};

template <typename Table> consteval bool in_value_order(const Table& table, std::size_t first) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (static_cast<std::size_t>(table[i].value) != i + first)
      return false;
  return true;
}

consteval bool dtypes_in_value_order() {
  for (std::size_t i = 0; i < kDTypes.size(); ++i)
    if (static_cast<std::size_t>(kDTypes[i].dtype) != i + 1)
      return false;
  return true;
}

static_assert(dtypes_in_value_order() && kDTypes.size() == 11, "kDTypes must list every DType");
static_assert(in_value_order(kStatuses, 1) && kStatuses.size() == 7,
              "kStatuses must list every EvaluationStatus");
static_assert(in_value_order(kLanguages, 1) && kLanguages.size() == 5,
              "kLanguages must list every Language");
static_assert(in_value_order(kBindings, 0) && kBindings.size() == 4,
              "kBindings must list every Binding");

template <typename Table, typename Enum> std::string_view name_of(const Table& table, Enum v) {
  for (const auto& row : table)
    if (row.value == v)
      return row.name;
  throw util::Fatal("enum value without a descriptor row");
}

template <typename Table>
auto value_of(const Table& table, std::string_view name)
    -> std::optional<decltype(table[0].value)> {
  for (const auto& row : table)
    if (row.name == name)
      return row.value;
  return std::nullopt;
}

const DTypeInfo& dtype_info(DType dtype) {
  for (const DTypeInfo& row : kDTypes)
    if (row.dtype == dtype)
      return row;
  throw util::Fatal("DType value without a descriptor row");
}

} // namespace

std::string_view to_string(DType dtype) {
  return dtype_info(dtype).name;
}
std::size_t dtype_bits(DType dtype) {
  return dtype_info(dtype).bits;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& row : kDTypes)
    if (row.name == name)
      return row.dtype;
  return std::nullopt;
}

std::string_view to_string(EvaluationStatus status) {
  return name_of(kStatuses, status);
}
std::optional<EvaluationStatus> parse_status(std::string_view name) {
  return value_of(kStatuses, name);
}

std::string_view to_string(Language language) {
  return name_of(kLanguages, language);
}
std::optional<Language> parse_language(std::string_view name) {
  return value_of(kLanguages, name);
}

std::string_view to_string(Binding binding) {
  return name_of(kBindings, binding);
}
std::optional<Binding> parse_binding(std::string_view name) {
  if (name.empty())
    return std::nullopt;
  return value_of(kBindings, name);
}

} // namespace ptxbench::trace
