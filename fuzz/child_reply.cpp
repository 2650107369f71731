// Replies of the candidate child (untrusted bytes: the candidate's code runs in that process
// and can write to its pipes): the supervisor's whole reading of one reply — the protocol
// decoder, then what the evaluator takes from a decoded reply: the counts into the dynamic
// verdict and the kernels into the launch rules. Invariants beyond "no crash, no exception": a
// refused reply is a bad_response naming the JSON path of what is wrong (or saying the line is
// not JSON, counts that do not read included: `$.counts: instruction counts: $…`); a decoded
// reply's encoding decodes to a reply with that same encoding; decoded counts come back equal
// through their JSON; and a dynamic verdict always comes with its reason when it is unknown.
#include "exec/dynamic_report.hpp"
#include "exec/launch_rules.hpp"
#include "protocol/protocol.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace ptxbench;
using namespace ptxbench::exec;

constexpr std::string_view kMalformed = "malformed reply from the candidate process: ";

bool says_where(const util::Error& error) {
  if (error.kind != util::ErrorKind::bad_response || !error.message.starts_with(kMalformed))
    return false;
  const std::string_view why = std::string_view(error.message).substr(kMalformed.size());
  return why.starts_with("$") || why == "not JSON";
}

Evaluation with_counts(const trace::Json& counts) {
  Evaluation ev;
  sass::ArchReport arch;
  arch.arch = "sm_90a";
  arch.target_families = sass::target_families_for("sm_90a");
  arch.functions.push_back({"_Z4gemmv", "gemm()", 1, {}, {}});
  ev.check.sass = sass::StaticReport{"", {arch}};
  ev.dynamic = DynamicReport{};
  ev.dynamic->raw = counts;
  return ev;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto reply = protocol::decode_reply(line);
  if (!reply) {
    if (!says_where(reply.error()))
      std::abort();
    return 0;
  }
  const std::string encoded = encode(*reply);
  auto again = protocol::decode_reply(encoded);
  if (!again || again->ok != reply->ok || again->error != reply->error || encode(*again) != encoded)
    std::abort();
  if (reply->counts) {
    // The typed counts (protocol/counts.hpp) go through their JSON and come back equal.
    const trace::Json json = protocol::to_json(*reply->counts);
    if (auto counts = read_counts(json); !counts || !(*counts == *reply->counts))
      std::abort();
    Evaluation ev = with_counts(json);
    suite::Problem problem;
    problem.flops = 1000;
    derive_dynamic(ev, problem);
    if (ev.dynamic->verdict == DynamicState::unknown && ev.dynamic->reason.empty())
      std::abort();
  }
  LaunchEvidence evidence;
  TracedCall call{0, false, {}, reply->call_ms};
  for (const protocol::KernelSeen& k : reply->kernels)
    call.launches.push_back(k.name);
  evidence.correctness = {call, call};
  evidence.add_timed(reply->kernel_sets);
  evidence.refused = reply->refused;
  (void)judge_launches(evidence, nullptr);
  return 0;
}
