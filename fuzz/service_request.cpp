// Evaluation-service request bodies (POST /evaluate, /sanitize, /profile from any client on the
// network): every field checked — a refused body is invalid_input naming the JSON path of what
// is wrong (or saying where it is not JSON), or not_found for a problem or workload the suite
// lacks; an accepted request's canonical JSON, which the task store keeps and a restarted
// server reads again, must be accepted again with the same meaning.
#include "service/task.hpp"
#include "suite/suite.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

bool says_why(const ptxbench::util::Error& error) {
  using ptxbench::util::ErrorKind;
  if (error.kind == ErrorKind::not_found)
    return !error.message.empty();
  return error.kind == ErrorKind::invalid_input &&
         (error.message.starts_with("request body: $") ||
          error.message.starts_with("request body: invalid JSON"));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptxbench;
  static const suite::Suite suite = *suite::Suite::load_default();
  if (size < 1)
    return 0;
  const service::TaskKind kind = service::kTaskKinds[data[0] % service::kTaskKinds.size()].kind;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto request = service::parse_task_request(body, kind, suite);
  if (!request) {
    if (!says_why(request.error()))
      std::abort();
    return 0;
  }
  auto again = service::parse_task_request(service::dump_json(request->canonical), kind, suite);
  if (!again || again->problem != request->problem || again->source != request->source ||
      again->solution_name != request->solution_name)
    std::abort();
  return 0;
}
