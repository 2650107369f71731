#include "protocol/child_arguments.hpp"

#include <charconv>
#include <fmt/format.h>
#include <optional>

namespace ptxbench::protocol {
namespace {

util::Error bad(std::string what) {
  return util::make_error(util::ErrorKind::invalid_input,
                          fmt::format("ptxbench-candidate: {}\n{}", what, child_usage()));
}

std::optional<int> number(const std::string& text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 0)
    return std::nullopt;
  return value;
}

// Stores `value` of `flag` in `out`; false for a flag this command line does not know.
util::Expected<bool> apply(ChildArguments& out, const std::string& flag, const std::string& value) {
  int* integer = flag == "--device"       ? &out.device
                 : flag == "--request-fd" ? &out.request_fd
                 : flag == "--reply-fd"   ? &out.reply_fd
                 : flag == "--buffer-fd"  ? &out.buffer_fd
                 : flag == "--warmup"     ? &out.options.warmup
                                          : nullptr;
  if (integer != nullptr) {
    auto parsed = number(value);
    if (!parsed)
      return bad(fmt::format("{} \"{}\" is not a non-negative integer", flag, value));
    *integer = *parsed;
    return true;
  }
  if (flag == "--single-call")
    out.spec = value;
  else if (flag == "--inputs")
    out.inputs = value;
  else if (flag == "--nvtx-range")
    out.options.nvtx_range = value;
  else
    return false;
  return true;
}

util::Status complete(ChildArguments& out) {
  if (out.device < 0)
    return bad("--device is required");
  const bool single = !out.spec.empty() || !out.inputs.empty();
  const bool serve = out.request_fd >= 0 || out.reply_fd >= 0;
  if (single == serve)
    return bad("give either --request-fd and --reply-fd, or --single-call");
  if (single && (out.spec.empty() || out.inputs.empty()))
    return bad("--single-call and --inputs go together");
  if (serve && (out.request_fd < 0 || out.reply_fd < 0))
    return bad("--request-fd and --reply-fd go together");
  if (single && out.buffer_fd >= 0)
    return bad("--buffer-fd belongs to the serving mode");
  out.mode = single ? ChildMode::single_call : ChildMode::serve;
  return util::Ok{};
}

} // namespace

std::string_view child_usage() {
  return "usage: ptxbench-candidate --device D --request-fd N --reply-fd M [--buffer-fd B]\n"
         "       ptxbench-candidate --device D --single-call SPEC --inputs FILE "
         "[--nvtx-range NAME] [--warmup N]";
}

std::vector<std::string> serve_argv(const std::filesystem::path& binary, int device, int request_fd,
                                    int reply_fd, int buffer_fd) {
  std::vector<std::string> out{binary.string(),
                               "--device",
                               std::to_string(device),
                               "--request-fd",
                               std::to_string(request_fd),
                               "--reply-fd",
                               std::to_string(reply_fd)};
  if (buffer_fd >= 0)
    out.insert(out.end(), {"--buffer-fd", std::to_string(buffer_fd)});
  return out;
}

std::vector<std::string> single_call_argv(const std::filesystem::path& binary, int device,
                                          const std::filesystem::path& spec,
                                          const std::filesystem::path& inputs,
                                          const SingleCallOptions& options) {
  std::vector<std::string> out{binary.string(), "--device", std::to_string(device), "--single-call",
                               spec.string(),   "--inputs", inputs.string()};
  if (!options.nvtx_range.empty())
    out.insert(out.end(), {"--nvtx-range", options.nvtx_range});
  if (options.warmup > 0)
    out.insert(out.end(), {"--warmup", std::to_string(options.warmup)});
  return out;
}

util::Expected<ChildArguments> parse_child_arguments(std::span<const std::string> args) {
  ChildArguments out;
  for (std::size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 >= args.size())
      return bad(fmt::format("{} needs a value", args[i]));
    PTXBENCH_TRY_ASSIGN(auto known, apply(out, args[i], args[i + 1]));
    if (!known)
      return bad(fmt::format("unknown argument \"{}\"", args[i]));
  }
  PTXBENCH_TRY(complete(out));
  return out;
}

} // namespace ptxbench::protocol
