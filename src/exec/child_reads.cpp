#include "exec/child_reads.hpp"

#include "exec/child_command.hpp"
#include "util/paths.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ptxbench::exec {
namespace {

namespace fs = std::filesystem;

// The part that depends on neither the binary nor the child: made once per process.
const util::ReadAllowance& shared_reads() {
  static std::once_flag once;
  static util::ReadAllowance reads;
  std::call_once(once, [] {
    // The problems' public definitions: the A/A child's library baseline reads its problem.
    reads.trees = {"/proc",    "/sys",       "/dev",
                   "/etc",     "/usr/share", "/usr/lib/locale",
                   "/usr/bin", "/bin",       util::data_root() / "problems"};
    // Other candidates' builds and other children's folders, wherever a library lives.
    reads.kept_out = {util::cache_root(), fs::temp_directory_path()};
    util::allow_mapped_library_folders(reads);
  });
  return reads;
}

// The shared libraries `binary` loads at start as its dynamic loader resolves them, the way ldd
// asks: with LD_TRACE_LOADED_OBJECTS set, the loader lists "name => path (address)" and exits
// before the program's first instruction.
std::vector<fs::path> loaded_libraries(const fs::path& binary) {
  std::vector<fs::path> libraries;
  util::PosixProcessRunner runner;
  util::ProcessOptions options;
  options.extra_env = {"LD_TRACE_LOADED_OBJECTS=1"};
  options.timeout = std::chrono::seconds(20);
  if (auto listed = runner.run({binary.string()}, options); listed && listed->succeeded()) {
    std::istringstream lines(listed->out);
    for (std::string line; std::getline(lines, line);) {
      const std::size_t arrow = line.find("=> /");
      const std::size_t end = line.rfind(" (");
      if (arrow != std::string::npos && end != std::string::npos && end > arrow)
        libraries.emplace_back(line.substr(arrow + 3, end - arrow - 3));
    }
  }
  return libraries;
}

// Everything but the child's own folder, made once per binary: walking the library folders
// takes a few milliseconds each.
util::ReadAllowance binary_reads(const fs::path& binary) {
  util::ReadAllowance reads = shared_reads();
  std::set<fs::path> whole;
  std::set<fs::path> split{binary.parent_path(), child_library_path().parent_path()};
  for (const fs::path& library : loaded_libraries(binary)) {
    std::error_code ec;
    const fs::path real = fs::canonical(library, ec);
    if (ec)
      continue;
    if (util::is_kernel_library(real.filename().string()) ||
        util::is_kernel_library(library.filename().string()))
      whole.insert(real.parent_path()); // the binary's own: the A/A's library
    else
      split.insert(real.parent_path());
  }
  for (const fs::path& tree : whole)
    reads.trees.push_back(tree);
  for (const fs::path& folder : split)
    if (!whole.contains(folder))
      util::allow_all_but_kernel_libraries(folder, reads);
  return reads;
}

} // namespace

util::ReadAllowance child_reads(const fs::path& binary, const fs::path& folder) {
  static std::mutex mutex;
  static std::map<fs::path, util::ReadAllowance> known;
  util::ReadAllowance reads;
  {
    std::lock_guard lock(mutex);
    auto it = known.find(binary);
    if (it == known.end())
      it = known.emplace(binary, binary_reads(binary)).first;
    reads = it->second;
  }
  reads.trees.push_back(folder);
  return reads;
}

} // namespace ptxbench::exec
