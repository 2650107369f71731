#include "exec/child_reads.hpp"

#include "compile/imports.hpp"
#include "exec/child_command.hpp"

#include <mutex>

namespace ptxbench::exec {
namespace {

namespace fs = std::filesystem;

// The part that depends on neither the binary nor the child: made once per process.
const util::ReadAllowance& shared_reads() {
  static std::once_flag once;
  static util::ReadAllowance reads;
  std::call_once(once, [] {
    reads.trees = {"/proc",           "/sys",     "/dev", "/etc", "/usr/share",
                   "/usr/lib/locale", "/usr/bin", "/bin"};
    util::allow_mapped_library_folders(reads);
  });
  return reads;
}

} // namespace

util::ReadAllowance child_reads(const fs::path& binary, const fs::path& folder) {
  util::ReadAllowance reads = shared_reads();
  util::allow_all_but_kernel_libraries(binary.parent_path(), reads);
  util::allow_all_but_kernel_libraries(child_library_path().parent_path(), reads);
  if (auto imports = compile::read_imports(binary))
    for (const std::string& soname : imports->needed)
      if (util::is_kernel_library(soname))
        for (const fs::path& file : util::mapped_files())
          if (file.filename() == soname)
            reads.trees.push_back(file.parent_path());
  reads.trees.push_back(folder);
  return reads;
}

} // namespace ptxbench::exec
