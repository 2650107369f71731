// Shared by the sass tests: builds tests/kernels/*.cu with the real nvcc (once per source and
// arch set, cached on disk under the temp folder so every test process and every ctest run
// reuses it), finds cuobjdump, and compares JSON against golden files in tests/data/sass/
// (PTXBENCH_UPDATE_GOLDEN=1 rewrites them).
#pragma once

#include "sass/disassemble.hpp"
#include "sass/report.hpp"
#include "support/golden.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "util/subprocess.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace ptxbench::sass::testing {

inline std::filesystem::path kernels_dir() {
  return PTXBENCH_TEST_KERNELS;
}

inline std::filesystem::path nvcc_path() {
  std::filesystem::path nvcc = util::find_on_path("nvcc");
  return nvcc.empty() ? std::filesystem::path("/usr/local/cuda/bin/nvcc") : nvcc;
}

inline std::vector<std::string> nvcc_args(const std::filesystem::path& source,
                                          const std::vector<std::string>& arches,
                                          const std::filesystem::path& output) {
  std::vector<std::string> argv{nvcc_path().string(), "-O3", "-std=c++20", "-lineinfo"};
  for (const std::string& arch : arches) {
    argv.push_back("-gencode");
    argv.push_back("arch=compute_" + arch.substr(3) + ",code=" + arch);
  }
  for (const char* arg : {"-Xcompiler", "-fPIC", "-c"})
    argv.emplace_back(arg);
  argv.push_back(source.string());
  argv.push_back("-o");
  argv.push_back(output.string());
  return argv;
}

// The object file of tests/kernels/<name>.cu built for `arches` ("sm_90a", ...). Fails the
// current test (fatally) when nvcc fails.
inline std::filesystem::path build_kernel(const std::string& name,
                                          const std::vector<std::string>& arches) {
  static std::map<std::string, std::filesystem::path> built;
  const std::filesystem::path source = kernels_dir() / (name + ".cu");
  const util::Expected<std::string> text = util::read_file(source);
  if (!text)
    throw util::Fatal("cannot read " + source.string());
  std::string key_text = *text;
  for (const std::string& arg : nvcc_args(source, arches, "out.o"))
    key_text += '\0' + arg;
  const std::string key = util::sha256_hex(key_text).substr(0, 24);
  if (auto it = built.find(key); it != built.end())
    return it->second;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ptxbench-sass-tests";
  const std::filesystem::path object = dir / (name + "." + key + ".o");
  if (!std::filesystem::exists(object)) {
    std::filesystem::create_directories(dir);
    const std::filesystem::path partial = dir / (key + "." + std::to_string(::getpid()) + ".o");
    util::PosixProcessRunner runner;
    util::Expected<util::ProcessResult> result =
        runner.run(nvcc_args(source, arches, partial), util::ProcessOptions{});
    if (!result || !result->succeeded())
      throw util::Fatal("nvcc failed on " + name + ".cu: " + (result ? result->err : ""));
    std::filesystem::rename(partial, object);
  }
  return built[key] = object;
}

inline std::filesystem::path cuobjdump_path() {
  util::Expected<std::filesystem::path> found = locate_cuobjdump(ToolSearch::from_environment());
  if (!found)
    throw util::Fatal(found.error().message);
  return *found;
}

// Memoized per process: each (kernel, arches) is disassembled once.
inline StaticReport report_for(const std::string& name, const std::vector<std::string>& arches) {
  static util::PosixProcessRunner runner;
  static const Disassembler disassembler(runner, cuobjdump_path());
  static std::map<std::string, StaticReport> reports;
  std::string key = name;
  for (const std::string& arch : arches)
    key += " " + arch;
  if (auto it = reports.find(key); it != reports.end())
    return it->second;
  util::Expected<StaticReport> report = analyze_binary(disassembler, build_kernel(name, arches));
  if (!report)
    throw util::Fatal(report.error().message);
  return reports[key] = std::move(report).value();
}

// Compares `actual` with tests/data/sass/<file>, or rewrites the file when updating.
inline void expect_golden(const std::string& file, const std::string& actual) {
  test_support::expect_golden(std::filesystem::path("sass") / file, actual);
}

} // namespace ptxbench::sass::testing
