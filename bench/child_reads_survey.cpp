// child_reads_survey: what a ptxbench-candidate child may read (exec/child_reads.hpp) on this
// machine, and which of those files carry GPU code (a fatbin: the magic 0xBA55ED50 anywhere in
// an ELF file), so that catalogue row 1's open part can name them (docs/evaluation.md, "What the
// child and nvcc may read"). Prints the allowance's size, the files with GPU code (size, fatbin
// headers found), and whether a kernel library is among the readable files.
//
//   child_reads_survey PTXBENCH_CANDIDATE
//   child_reads_survey PTXBENCH_CANDIDATE --run COMMAND...   (COMMAND confined to that allowance:
//                                                             its status and output)
#include "exec/child_reads.hpp"
#include "util/read_confinement.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace ptxbench;

namespace {

constexpr std::uintmax_t kMaxBytes = 4ull << 30;

// How many fatbin headers an ELF file holds; 0 for anything else.
std::size_t fatbin_headers(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char head[4] = {};
  if (!in.read(head, 4) || head[0] != 0x7f || head[1] != 'E' || head[2] != 'L' || head[3] != 'F')
    return 0;
  in.seekg(0);
  const unsigned char magic[4] = {0x50, 0xED, 0x55, 0xBA};
  std::vector<char> buffer(1 << 20);
  std::size_t found = 0, matched = 0;
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      const auto byte = static_cast<unsigned char>(buffer[static_cast<std::size_t>(i)]);
      matched = byte == magic[matched] ? matched + 1 : (byte == magic[0] ? 1 : 0);
      if (matched == 4) {
        ++found;
        matched = 0;
      }
    }
  }
  return found;
}

void survey(const fs::path& file, std::set<fs::path>& seen, std::size_t& files,
            std::size_t& libraries) {
  std::error_code ec;
  const fs::path real = fs::canonical(file, ec);
  if (ec || !seen.insert(real).second || !fs::is_regular_file(real, ec) ||
      fs::file_size(real, ec) > kMaxBytes)
    return;
  ++files;
  if (util::is_kernel_library(real.filename().string()))
    ++libraries;
  if (const std::size_t headers = fatbin_headers(real); headers > 0)
    std::printf("gpu code  %10ju bytes  %5zu fatbin headers  %s\n",
                static_cast<std::uintmax_t>(fs::file_size(real, ec)), headers, real.c_str());
}

} // namespace

// Runs `argv` confined to `reads` and prints what it did.
int run_confined(const util::ReadAllowance& reads, const std::vector<std::string>& argv) {
  auto ruleset = util::make_read_ruleset(reads);
  if (!ruleset) {
    std::fprintf(stderr, "%s\n", ruleset.error().message.c_str());
    return 1;
  }
  util::PosixProcessRunner runner;
  util::ProcessOptions options;
  options.read_ruleset = ruleset->get();
  options.timeout = std::chrono::seconds(60);
  auto result = runner.run(argv, options);
  if (!result) {
    std::fprintf(stderr, "%s\n", result.error().message.c_str());
    return 1;
  }
  std::printf("exit %d signal %d timed out %d\n--- stdout\n%s\n--- stderr\n%s\n", result->exit_code,
              result->term_signal, result->timed_out ? 1 : 0, result->out.c_str(),
              result->err.c_str());
  return result->succeeded() ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || (argc > 2 && (std::string(argv[2]) != "--run" || argc < 4))) {
    std::fprintf(stderr, "usage: child_reads_survey PTXBENCH_CANDIDATE [--run COMMAND...]\n");
    return 2;
  }
  const util::ReadAllowance reads = exec::child_reads(argv[1], fs::temp_directory_path());
  if (argc > 2)
    return run_confined(reads, std::vector<std::string>(argv + 3, argv + argc));
  std::printf("allowance: %zu folders whole, %zu files\n", reads.trees.size(), reads.files.size());
  for (const fs::path& tree : reads.trees)
    std::printf("folder    %s\n", tree.c_str());
  std::set<fs::path> seen;
  std::size_t files = 0, libraries = 0;
  for (const fs::path& tree : reads.trees) {
    if (tree == fs::temp_directory_path() || tree == "/proc" || tree == "/sys" || tree == "/dev")
      continue; // the child's own folder (empty here) and the kernel's pseudo-files
    std::error_code ec;
    for (fs::recursive_directory_iterator
             it(tree, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec))
      if (!it->is_symlink(ec))
        survey(it->path(), seen, files, libraries);
  }
  for (const fs::path& file : reads.files)
    survey(file, seen, files, libraries);
  std::printf("readable files surveyed: %zu; kernel libraries among them: %zu\n", files, libraries);
  return libraries == 0 ? 0 : 1;
}
