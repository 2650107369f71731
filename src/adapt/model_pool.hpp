// The worker pool of the adaptation stages that call a model once per input (synthesize, notes):
// one model client and one thread per slot, up to `concurrency`; jobs are taken in input order.
// Each record a job returns is appended to the stage's JSON Lines output under one lock (so a
// kill loses at most the record being written), counted as done or failed, and announced on the
// progress stream. The first append that fails stops every worker before its next job and is the
// pool's error; a job that returns nullopt (stopped) is left for the next run.
#pragma once

#include "adapt/jsonl.hpp"
#include "adapt/model_stage.hpp"
#include "model/factory.hpp"
#include "util/error.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fmt/core.h>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::adapt {

// Whether another pass may help after a model call failed this way.
inline bool worth_another_pass(util::ErrorKind kind) {
  return kind != util::ErrorKind::invalid_input && kind != util::ErrorKind::not_found &&
         kind != util::ErrorKind::unsupported;
}

// Record: has `id`, `status` ("done" or "failed"), `error`, `cost_usd` and a to_json overload.
template <typename Job, typename Record> class ModelPool {
public:
  using Attempt = std::function<std::optional<Record>(model::ModelClient&, const Job&)>;
  // The text after "done" on the progress line, e.g. " (5 notes)".
  using DoneDetail = std::function<std::string(const Record&)>;

  ModelPool(const std::vector<Job>& jobs, std::filesystem::path output, std::FILE* progress,
            DoneDetail detail)
      : m_jobs(jobs), m_output(std::move(output)), m_progress(progress),
        m_detail(std::move(detail)) {}

  // Result: has done, failed, left and cost_usd, filled when no append failed.
  template <typename Result>
  util::Status run(const model::ModelSpec& spec, const model::ClientDeps& deps, int concurrency,
                   const Attempt& attempt, Result& result) {
    const int count = std::max(1, std::min<int>(concurrency, static_cast<int>(m_jobs.size())));
    std::vector<std::unique_ptr<model::ModelClient>> clients;
    for (int i = 0; i < count; ++i) {
      PTXBENCH_TRY_ASSIGN(auto client, model::make_client(spec, deps));
      clients.push_back(std::move(client));
    }
    std::vector<std::thread> threads;
    for (auto& client : clients)
      threads.emplace_back([this, &client, &attempt] { work(*client, attempt); });
    for (auto& thread : threads)
      thread.join();
    if (m_error)
      return *m_error;
    result.done = m_done;
    result.failed = m_failed;
    result.left = m_jobs.size() - m_done - m_failed;
    result.cost_usd = m_cost;
    return util::Ok{};
  }

private:
  void work(model::ModelClient& client, const Attempt& attempt) {
    for (std::size_t i = m_next++; i < m_jobs.size(); i = m_next++) {
      {
        std::lock_guard lock(m_mutex);
        if (m_error)
          return;
      }
      if (auto record = attempt(client, m_jobs[i]))
        finish(*record);
    }
  }

  void finish(const Record& record) {
    std::lock_guard lock(m_mutex);
    if (auto status = append_jsonl(m_output, to_json(record)); !status) {
      if (!m_error)
        m_error = status.error();
      return;
    }
    (record.status == "done" ? m_done : m_failed) += 1;
    m_cost += record.cost_usd.value_or(0);
    if (m_progress != nullptr)
      fmt::print(m_progress, "[{}/{}] {} {}{}\n", m_done + m_failed, m_jobs.size(),
                 record.id.substr(0, 12), record.status,
                 record.status == "done" ? m_detail(record) : ": " + record.error);
  }

  const std::vector<Job>& m_jobs;
  std::filesystem::path m_output;
  std::FILE* m_progress;
  DoneDetail m_detail;
  std::atomic<std::size_t> m_next{0};
  std::mutex m_mutex;
  std::optional<util::Error> m_error;
  std::size_t m_done = 0;
  std::size_t m_failed = 0;
  double m_cost = 0;
};

// One round of a resumable stage: the jobs whose id is not in `done` each get
// `attempt(client, job)` on a pool of up to `concurrency` clients of `spec`, their records
// appended to `output`; inputs and already_done are counted here, the rest by the pool.
template <typename Job, typename Record>
util::Expected<ModelStageResult>
run_model_round(std::vector<Job> jobs, const std::set<std::string>& done,
                const model::ModelSpec& spec, const ModelStageDeps& deps, int concurrency,
                const std::filesystem::path& output,
                typename ModelPool<Job, Record>::DoneDetail detail,
                const typename ModelPool<Job, Record>::Attempt& attempt) {
  ModelStageResult result;
  result.inputs = jobs.size();
  std::erase_if(jobs, [&](const Job& job) { return done.contains(job.id); });
  result.already_done = result.inputs - jobs.size();
  if (!jobs.empty()) {
    ModelPool<Job, Record> pool(jobs, output, deps.progress_out, std::move(detail));
    PTXBENCH_TRY(pool.run(spec, deps.client, concurrency, attempt, result));
  }
  return result;
}

} // namespace ptxbench::adapt
