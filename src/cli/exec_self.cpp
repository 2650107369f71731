#include "cli/exec_self.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace ptxbench::cli {

util::Error exec_self() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t start = 0, end; start < all.size(); start = end + 1) {
    end = all.find('\0', start);
    if (end == std::string::npos)
      end = all.size();
    args.push_back(all.substr(start, end - start));
  }
  if (args.empty())
    return util::make_error(util::ErrorKind::io, "re-executing: /proc/self/cmdline is empty");
  std::vector<char*> argv;
  for (std::string& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv("/proc/self/exe", argv.data());
  return util::make_error(util::ErrorKind::subprocess,
                          fmt::format("re-executing {}: {}", args.front(), std::strerror(errno)));
}

} // namespace ptxbench::cli
