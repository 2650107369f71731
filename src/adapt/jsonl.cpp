#include "adapt/jsonl.hpp"

#include "util/fs.hpp"
#include "util/strings.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace ptxbench::adapt {
namespace {

util::Error io_error(const std::filesystem::path& path) {
  return util::make_error(util::ErrorKind::io, path.string() + ": " + std::strerror(errno));
}

util::Status write_synced(int fd, std::string_view text, const std::filesystem::path& path) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return io_error(path);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::fsync(fd) != 0)
    return io_error(path);
  return util::Ok{};
}

} // namespace

util::Expected<std::vector<JsonlLine>> read_jsonl_lines(const std::filesystem::path& path,
                                                        std::FILE* warnings) {
  if (!std::filesystem::exists(path))
    return util::make_error(util::ErrorKind::not_found, path.string() + ": no such file");
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  const bool ends_clean = text.empty() || text.back() == '\n';
  const auto lines = util::split_lines(text);
  std::vector<JsonlLine> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (util::trim(lines[i]).empty())
      continue;
    const auto number = static_cast<std::int64_t>(i + 1);
    Json value = Json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    if (!value.is_discarded()) {
      out.push_back(JsonlLine{number, std::move(value)});
      continue;
    }
    if (!ends_clean && i + 1 == lines.size()) {
      if (warnings != nullptr)
        fmt::print(warnings,
                   "warning: {}:{}: torn last line (a writer killed mid-append) ignored\n",
                   path.string(), number);
      break;
    }
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("{}:{}: not a JSON document", path.string(), number));
  }
  return out;
}

util::Status append_jsonl(const std::filesystem::path& path, const Json& value) {
  std::error_code ec;
  if (path.has_parent_path())
    std::filesystem::create_directories(path.parent_path(), ec);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return io_error(path);
  std::string text;
  off_t size = ::lseek(fd, 0, SEEK_END);
  char last = '\n';
  if (size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n')
    text += '\n';
  text += value.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  util::Status written = write_synced(fd, text, path);
  ::close(fd);
  return written;
}

std::string to_jsonl(const std::vector<Json>& values) {
  std::string out;
  for (const Json& value : values)
    out += value.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  return out;
}

util::Expected<std::set<std::string>> keep_done_lines(const std::filesystem::path& path,
                                                      const DoneId& done_id) {
  auto lines = read_jsonl_lines(path);
  if (!lines && lines.error().kind == util::ErrorKind::not_found)
    return std::set<std::string>{};
  PTXBENCH_TRY(lines);
  std::set<std::string> done;
  std::vector<Json> kept;
  for (const JsonlLine& line : *lines) {
    const std::optional<std::string> id = done_id(line.json);
    if (id && done.insert(*id).second)
      kept.push_back(line.json);
  }
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  if (text != to_jsonl(kept))
    PTXBENCH_TRY(util::write_file_atomic(path, to_jsonl(kept)));
  return done;
}

} // namespace ptxbench::adapt
