#include "util/read_confinement.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/landlock.h>
#include <set>
#include <string>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ptxbench::util {
namespace {

namespace fs = std::filesystem;

// The access rights this module handles: all that reading needs, nothing that writing needs.
constexpr std::uint64_t kReadFile = LANDLOCK_ACCESS_FS_READ_FILE;
constexpr std::uint64_t kReadTree = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

// By prefix: "libcufft" covers cuFFTW, "libnvinfer" TensorRT's plugins.
constexpr std::array<std::string_view, 17> kKernelLibraryPrefixes{
    "libcublas",   "libcudnn",    "libcufft",      "libcurand",  "libcusolver", "libcusparse",
    "libcutensor", "libnpp",      "libnvblas",     "libnvjpeg",  "libnccl",     "libnvinfer",
    "libtorch",    "libc10_cuda", "libflashinfer", "libcutlass", "libcudss"};

bool holds_kernel_library(const fs::path& folder) {
  std::error_code ec;
  for (fs::recursive_directory_iterator
           it(folder, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec))
    if (is_kernel_library(it->path().filename().string())) // links to folders are not entered
      return true;
  return false;
}

// `folder` resolved, without a trailing separator: comparable element by element.
fs::path real_folder(const fs::path& folder) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(folder, ec);
  if (ec)
    real = folder.lexically_normal();
  return real.has_filename() || real == real.root_path() ? real : real.parent_path();
}

void add_path(int ruleset, const fs::path& path, std::uint64_t access) {
  const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0)
    return; // absent or unreachable: nothing to allow
  landlock_path_beneath_attr rule{};
  rule.allowed_access = access;
  rule.parent_fd = fd;
  // A file takes only file rights; a folder given as a file (or the reverse) gets what applies.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
    rule.allowed_access &= kReadFile;
  (void)::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  ::close(fd);
}

} // namespace

bool is_kernel_library(std::string_view name) {
  return std::ranges::any_of(kKernelLibraryPrefixes,
                             [&](std::string_view prefix) { return name.starts_with(prefix); });
}

void allow_all_but_kernel_libraries(const fs::path& folder, ReadAllowance& allowance) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    return;
  const fs::path real = real_folder(folder);
  bool holds_kept_out = false;
  for (const fs::path& kept : allowance.kept_out) {
    const fs::path kept_real = real_folder(kept);
    if (kept_real == real)
      return;
    holds_kept_out = holds_kept_out || std::ranges::mismatch(real, kept_real).in1 == real.end();
  }
  if (!holds_kept_out && !holds_kernel_library(folder)) {
    allowance.trees.push_back(folder);
    return;
  }
  for (fs::directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const fs::path& entry = it->path();
    // A link is allowed where it leads, if there; a link to a folder allowed as a file would
    // allow reading everything beneath that folder.
    if (is_kernel_library(entry.filename().string()) || it->is_symlink(ec))
      continue;
    if (it->is_directory(ec))
      allow_all_but_kernel_libraries(entry, allowance);
    else
      allowance.files.push_back(entry);
  }
}

std::vector<fs::path> mapped_files() {
  std::ifstream maps("/proc/self/maps");
  std::set<fs::path> files;
  std::string line;
  while (std::getline(maps, line)) {
    const std::size_t slash = line.find(" /");
    if (slash == std::string::npos)
      continue;
    const std::string file = line.substr(slash + 1);
    if (!file.ends_with(" (deleted)") && !file.starts_with("/dev/") && !file.starts_with("/memfd:"))
      files.insert(file);
  }
  return {files.begin(), files.end()};
}

void allow_mapped_library_folders(ReadAllowance& allowance) {
  std::set<fs::path> folders;
  for (const fs::path& file : mapped_files())
    folders.insert(file.parent_path());
  for (const fs::path& folder : folders)
    allow_all_but_kernel_libraries(folder, allowance);
}

bool read_confinement_available() {
  static const bool available = make_read_ruleset({}).has_value();
  return available;
}

Expected<Fd> make_read_ruleset(const ReadAllowance& allowance) {
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = kReadTree;
  const long ruleset = ::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) {
    const int error = errno;
    // No Landlock in the kernel, turned off at boot, or refused by a container's own seccomp
    // profile (EPERM): the process runs unconfined and says so; anything else is a fault.
    const ErrorKind kind = error == ENOSYS || error == EOPNOTSUPP || error == EPERM
                               ? ErrorKind::unsupported
                               : ErrorKind::io;
    return make_error(kind, std::string("Landlock ruleset: ") + std::strerror(error));
  }
  Fd fd(static_cast<int>(ruleset));
  for (const fs::path& tree : allowance.trees)
    add_path(fd.get(), tree, kReadTree);
  for (const fs::path& file : allowance.files)
    add_path(fd.get(), file, kReadFile);
  return fd;
}

} // namespace ptxbench::util
