#include "util/fs.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace ptxbench::util {
namespace fs = std::filesystem;

Expected<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    auto kind = fs::exists(path) ? ErrorKind::io : ErrorKind::not_found;
    return make_error(kind, path.string() + ": cannot open (" + std::strerror(errno) + ")");
  }
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

static Status write_all(int fd, std::string_view content, const fs::path& path) {
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return make_error(ErrorKind::io, path.string() + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  return Ok{};
}

Status write_file_atomic(const fs::path& path, std::string_view content) {
  std::error_code ec;
  if (path.has_parent_path())
    fs::create_directories(path.parent_path(), ec);
  if (ec)
    return make_error(ErrorKind::io, path.parent_path().string() + ": " + ec.message());
  std::string tmp = path.string() + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return make_error(ErrorKind::io, tmp + ": " + std::strerror(errno));
  // mkstemp creates 0600; the result should look like any other file the user writes.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  Status written = write_all(fd, content, path);
  bool synced = written && ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return written ? make_error(ErrorKind::io, path.string() + ": " + std::strerror(errno))
                   : written;
  }
  return Ok{};
}

Status append_line(const fs::path& path, std::string_view line) {
  std::error_code ec;
  if (path.has_parent_path())
    fs::create_directories(path.parent_path(), ec);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error(ErrorKind::io, path.string() + ": " + std::strerror(errno));
  std::string text;
  off_t size = ::lseek(fd, 0, SEEK_END);
  char last = '\n';
  if (size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n')
    text += '\n';
  text.append(line);
  if (text.empty() || text.back() != '\n')
    text += '\n';
  Status written = write_all(fd, text, path);
  ::close(fd);
  return written;
}

} // namespace ptxbench::util
