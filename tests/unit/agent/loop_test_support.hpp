// Doubles for the agent-loop tests: a scripted model client (the one thing that cannot run
// here is a remote model) and a scripted executor standing in for the GPU step, plus a store in
// a scratch folder and a problem from the real suite.
#pragma once

#include "agent/executor.hpp"
#include "agent/loop.hpp"
#include "agent_test_support.hpp"
#include "suite/suite.hpp"
#include "support/real_data.hpp"

#include <deque>
#include <mutex>
#include <stdexcept>
#include <variant>

namespace ptxbench::agent::testing {

inline std::string kernel_reply(std::string_view marker) {
  return "Here is the kernel.\n\n```cuda\n#include <cuda_runtime.h>\n// " + std::string(marker) +
         "\n__global__ void k() {}\nvoid run(cudaStream_t stream) { k<<<1, 1, 0, stream>>>(); }\n"
         "```\n";
}

// Plays scripted replies (a text that ended with "stop", or a whole response) or errors in order
// and records every request's messages.
class ScriptedClient final : public model::ModelClient {
public:
  using Step = std::variant<std::string, util::Error, model::ChatResponse>;
  explicit ScriptedClient(std::vector<Step> steps, std::string name = "scripted")
      : m_steps(steps.begin(), steps.end()), m_name(std::move(name)) {}

  util::Expected<model::ChatResponse> complete(const model::ChatRequest& request) override {
    std::lock_guard lock(m_mutex);
    m_requests.push_back(request.messages);
    if (m_steps.empty())
      return util::make_error(util::ErrorKind::invalid_input, "script exhausted");
    Step step = std::move(m_steps.front());
    m_steps.pop_front();
    model::AttemptRecord attempt;
    attempt.provider = "scripted";
    attempt.model = m_name;
    attempt.request_sha256 = std::string(64, '0');
    model::ChatResponse reply;
    if (auto* error = std::get_if<util::Error>(&step)) {
      attempt.error = *error;
    } else if (auto* response = std::get_if<model::ChatResponse>(&step)) {
      reply = *response;
      attempt.response = &reply;
    } else {
      reply.text = std::get<std::string>(step);
      reply.usage = model::Usage{100, 50, 10};
      reply.finish_reason = "stop";
      attempt.response = &reply;
    }
    if (request.on_attempt)
      request.on_attempt(attempt);
    if (attempt.error)
      return *attempt.error;
    return reply;
  }
  std::string_view provider() const override { return "scripted"; }
  const std::string& model_name() const override { return m_name; }

  std::vector<std::vector<model::Message>> requests() const {
    std::lock_guard lock(m_mutex);
    return m_requests;
  }

private:
  std::deque<Step> m_steps;
  std::string m_name;
  mutable std::mutex m_mutex;
  std::vector<std::vector<model::Message>> m_requests;
};

// Hands the loop a client that forwards to a script the test keeps (to read its requests), and
// records the calls_made value each client was made with.
struct ClientSlot {
  std::shared_ptr<ScriptedClient> script;
  std::vector<std::int64_t> made_with;

  ClientMaker maker() {
    return [this](std::int64_t calls_made) -> util::Expected<std::unique_ptr<model::ModelClient>> {
      made_with.push_back(calls_made);
      return std::unique_ptr<model::ModelClient>(new Forwarder(script));
    };
  }

private:
  class Forwarder final : public model::ModelClient {
  public:
    explicit Forwarder(std::shared_ptr<ScriptedClient> to) : m_to(std::move(to)) {}
    util::Expected<model::ChatResponse> complete(const model::ChatRequest& r) override {
      return m_to->complete(r);
    }
    std::string_view provider() const override { return m_to->provider(); }
    const std::string& model_name() const override { return m_to->model_name(); }

  private:
    std::shared_ptr<ScriptedClient> m_to;
  };
};

// Returns scripted turn results (or errors) in order; counts calls.
class ScriptedExecutor final : public Executor {
public:
  struct Verdict {
    store::TurnCategory category = store::TurnCategory::numerical;
    std::optional<double> speedup;
  };
  // An evaluator that raises (as the JSON library did on a null counter: the verdict issue).
  struct Throw {
    std::string what;
  };
  using Step = std::variant<Verdict, util::Error, Throw>;
  explicit ScriptedExecutor(std::vector<Step> steps) : m_steps(steps.begin(), steps.end()) {}

  util::Expected<TurnResult> evaluate(const std::string& source, const suite::Problem&,
                                      compile::Arch) override {
    std::lock_guard lock(m_mutex);
    m_sources.push_back(source);
    if (m_steps.empty())
      return util::make_error(util::ErrorKind::subprocess, "executor script exhausted");
    Step step = std::move(m_steps.front());
    m_steps.pop_front();
    if (auto* error = std::get_if<util::Error>(&step))
      return *error;
    if (auto* raise = std::get_if<Throw>(&step))
      throw std::runtime_error(raise->what);
    const auto& verdict = std::get<Verdict>(step);
    TurnResult result;
    result.category = verdict.category;
    result.speedup = verdict.speedup;
    result.feedback =
        "verdict " + std::string(store::enum_name(store::kTurnCategories, verdict.category)) + "\n";
    result.evaluation.kernel_source = source;
    result.evaluation.speedup = verdict.speedup;
    result.evaluation.static_verdict = "present";
    return result;
  }
  std::string_view name() const override { return "scripted"; }
  std::size_t calls() const {
    std::lock_guard lock(m_mutex);
    return m_sources.size();
  }

private:
  std::deque<Step> m_steps;
  mutable std::mutex m_mutex;
  std::vector<std::string> m_sources;
};

using test_support::real_suite;

inline const suite::Problem& gemm_problem() {
  return **real_suite().find("gemm_n7168_k5120");
}

inline model::ModelSpec scripted_spec() {
  model::ModelSpec spec;
  spec.name = "scripted";
  spec.provider = "replay";
  return spec;
}

inline ScriptedExecutor::Verdict numerical() {
  return {store::TurnCategory::numerical, {}};
}
inline ScriptedExecutor::Verdict correct(double speedup) {
  return {store::TurnCategory::correct, speedup};
}

} // namespace ptxbench::agent::testing
