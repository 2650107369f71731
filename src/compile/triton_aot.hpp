// Ahead-of-time compilation of a Triton candidate on a machine without a GPU, for the static SASS
// report of `ptxbench check kernel.py`: python/ptxbench_triton/aot.py (run as a `python3`
// subprocess) runs the candidate's `run` once for the given arguments with stand-ins for torch
// and the GPU driver, lets Triton compile every kernel it launches for the target (sm_90a or
// sm_100a) without launching it, and writes their cubins into a folder this side owns.
//
// What is compiled is the AOT specialisation — the default workload's call and, for an
// autotuned kernel, its first configuration — not the evaluated call: the GPU evaluator scans
// the exact cubins of its own call. A `run` that needs more than shapes, dtypes and the SM count
// (torch operations, tensor data) cannot be specialised here and says so.
#pragma once

#include "compile/nvcc.hpp"
#include "trace/schema.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"
#include "util/temp_folder.hpp"

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ptxbench::compile {

// One argument of the `run` call: a tensor (dtype and dims; no data) or a Python number.
struct TritonAotArg {
  std::string name;
  std::optional<trace::DType> dtype;              // set for tensors
  std::vector<std::int64_t> dims;                 // tensors only
  std::variant<std::int64_t, double, bool> value; // scalars and variable axes
};

// Persisted in `check --json`.
enum class TritonAotOutcome : std::uint8_t {
  ok = 1,
  cannot_specialise = 2, // `run` did what the GPU-less stand-ins do not model, or launched nothing
  compile_error = 3,     // Triton could not compile a kernel `run` launched
  import_error = 4,      // the module raised while being imported
};

std::string_view to_string(TritonAotOutcome outcome);

struct TritonAotLaunch {
  std::string kernel;   // the @triton.jit function's Python name
  std::string function; // the cubin's entry name
  std::filesystem::path cubin;
  std::vector<std::int64_t> grid; // empty when a grid callable could not be evaluated
  int num_warps = 0;
  int num_stages = 0;
  std::int64_t shared_bytes = 0;
  nlohmann::ordered_json constexprs;
  std::string autotune; // "first of N configurations: <config>"; empty when not autotuned
};

// A folder under the temporary directory, removed with everything in it on destruction.
struct TritonAotResult {
  TritonAotOutcome outcome = TritonAotOutcome::ok;
  std::string message; // why, for every outcome but ok
  std::string triton_version;
  std::vector<TritonAotLaunch> launches; // in launch order, each distinct compilation once

  std::vector<std::filesystem::path> cubins() const;
};

// The result of aot.py's JSON output; not_found when it says Triton cannot be imported, and
// subprocess when the output is not its JSON.
util::Expected<TritonAotResult> parse_aot_output(std::string_view json);

// The spec aot.py reads: {"arch": ..., "params": [...]}, in `run`'s parameter order.
nlohmann::ordered_json make_aot_spec(Arch arch, const std::vector<TritonAotArg>& args);

// Where aot.py finds Triton: $PTXBENCH_TRITON_PATH when set, else <data root>/.deps/python-triton
// when it exists (scripts/setup.sh), else empty (the interpreter's own site-packages).
std::filesystem::path default_triton_path();

class TritonAotCompiler {
public:
  TritonAotCompiler(util::ProcessRunner& runner, std::filesystem::path python = "python3",
                    std::filesystem::path package_root = {},
                    std::filesystem::path triton_path = default_triton_path());

  // Compiles `source` for `arch` with `args` into `out` (cubins and Triton's cache). An Error
  // only when no verdict about the candidate exists: aot.py could not run, timed out, or
  // Triton is missing.
  util::Expected<TritonAotResult> compile(std::string_view source,
                                          const std::vector<TritonAotArg>& args, Arch arch,
                                          const util::TempFolder& out) const;

private:
  util::ProcessRunner& m_runner;
  std::filesystem::path m_python;
  std::filesystem::path m_package_root;
  std::filesystem::path m_triton_path;
};

} // namespace ptxbench::compile
