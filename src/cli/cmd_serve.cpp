// `ptxbench serve`: the evaluation service (docs/service.md) until SIGINT or SIGTERM. The
// first line on stdout is the bound URL, so scripts can start it with --port 0 and read where
// it listens. The first signal stops taking tasks and lets running evaluations finish (queued
// tasks stay in the state folder for the next start); a second one exits at once, and the
// next start re-queues what was running.
#include "agent/plan.hpp"
#include "cli/commands.hpp"
#include "cli/exec_self.hpp"
#include "cli/run_job.hpp"
#include "cli/tools.hpp"
#include "cuda/device.hpp"
#include "pack/manifest.hpp"
#include "rollout/rollouts.hpp"
#include "service/broker_service.hpp"
#include "service/fleet_host.hpp"
#include "service/http_server.hpp"
#include "service/service.hpp"
#include "service/task_executor.hpp"
#include "util/paths.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fmt/core.h>
#include <memory>
#include <mutex>
#include <optional>
#include <sys/file.h>
#include <unistd.h>

namespace ptxbench::cli {
namespace {

struct ServeCliOptions {
  std::string host = "127.0.0.1";
  bool insecure_no_auth = false;
  int port = 8000;
  std::string gpus = "all";
  int workers_per_gpu = 1;
  std::string counter_session = "when-idle";
  std::string spare_prepare = "beside-evaluation";
  std::string state;
  double max_body_mib = 8;
  int keep_finished_hours = static_cast<int>(service::ServiceOptions::kDefaultKeepFinished.count());
  std::string broker;
  std::string host_name;
  int lease_seconds = 60;
  bool port_given = false; // --port on the command line: with --broker, an HTTP front too
  bool no_workers = false;
  std::string rollouts; // the rollouts' folder; empty: <state>/rollouts (a front's: <cache>/…)
  bool no_rollouts = false;
};

int g_signal_pipe[2] = {-1, -1};
std::atomic<int> g_signals{0}; // lock-free, so usable in a signal handler
static_assert(std::atomic<int>::is_always_lock_free);
std::atomic<bool> g_restart{false}; // `serve --broker`: a GPU broke, the process starts again

extern "C" void on_serve_signal(int signal) {
  if (g_signals.fetch_add(1) > 0)
    std::_Exit(128 + signal);
  const char byte = 1;
  [[maybe_unused]] const ssize_t written = ::write(g_signal_pipe[1], &byte, 1);
}

void install_stop_signals() {
  if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) // closed when a broken GPU re-executes us
    throw util::Fatal("pipe for the stop signal failed");
  std::signal(SIGINT, on_serve_signal);
  std::signal(SIGTERM, on_serve_signal);
}

// Blocks until the first SIGINT or SIGTERM.
void wait_for_stop_signal() {
  char byte = 0;
  while (::read(g_signal_pipe[0], &byte, 1) < 0 && errno == EINTR) {
  }
}

void log_line(const std::string& line) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  fmt::print(stderr, "{} {}\n", service::utc_now(), line);
}

// Whether only this machine can reach a server listening on `host`.
bool is_loopback(std::string_view host) {
  return host == "localhost" || host.starts_with("127.") || host == "::1" || host == "[::1]";
}

util::Expected<service::HttpOptions> http_options(const ServeCliOptions& o) {
  if (o.port < 0 || o.port > 65535 || o.max_body_mib <= 0 || o.max_body_mib > 1024)
    return util::make_error(util::ErrorKind::invalid_input,
                            "--port must be 0..65535 and --max-body-mib in (0, 1024]");
  service::HttpOptions options;
  options.host = o.host;
  options.port = o.port;
  options.max_body_bytes = static_cast<std::size_t>(o.max_body_mib * 1024 * 1024);
  if (const char* token = std::getenv(kServiceTokenEnv); token != nullptr)
    options.token = token;
  // Every task runs its sender's native code on this machine's GPUs.
  if (!is_loopback(o.host) && options.token.empty() && !o.insecure_no_auth)
    return util::make_error(
        util::ErrorKind::invalid_input,
        fmt::format("--host {} listens beyond this machine and ${} is not set: anyone who "
                    "reaches the port could run native code here. Set a token, or pass "
                    "--insecure-no-auth to accept that",
                    o.host, kServiceTokenEnv));
  return options;
}

// Whether another process holds the state folder's lock (service/task_store.cpp takes it): the
// `--state` given is in use, a bad input like any other command-line error (exit 2).
bool held_by_another_server(const std::filesystem::path& state_dir) {
  const int fd = ::open((state_dir / "lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

std::string auth_text(const service::HttpOptions& http) {
  return http.token.empty()
             ? fmt::format("auth off (set ${} to require a bearer token)", kServiceTokenEnv)
             : fmt::format("auth on: a bearer token (${}) is required", kServiceTokenEnv);
}

std::string workers_text(const service::Health& health) {
  std::string out;
  for (const auto& worker : health.workers)
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", worker.device,
                       worker.name.empty() ? "" : " (" + worker.name + ")");
  return out;
}

exec::CounterSessionAhead counter_session(const ServeCliOptions& o) {
  return o.counter_session == "beside-timing" ? exec::CounterSessionAhead::beside_timing
                                              : exec::CounterSessionAhead::when_idle;
}

exec::SparePrepare spare_prepare(const ServeCliOptions& o) {
  return o.spare_prepare == "after-timing" ? exec::SparePrepare::after_timing
                                           : exec::SparePrepare::beside_evaluation;
}

// The rollouts an HTTP server keeps (docs/service.md "Rollouts") and what they stand on: the
// knowledge packs and, per candidate language, an executor over the server's own queue. Made
// after the queue and before the server, so that it outlives the server and not the queue.
class RolloutHost {
public:
  static util::Expected<std::unique_ptr<RolloutHost>> open(const std::filesystem::path& root,
                                                           const exec::Checker& checker,
                                                           service::TaskService& tasks,
                                                           const suite::Suite& suite) {
    auto host = std::unique_ptr<RolloutHost>(new RolloutHost());
    PTXBENCH_TRY_ASSIGN(host->m_manifest, pack::Manifest::load(pack::Manifest::default_path()));
    for (compile::Language language : {compile::Language::cuda, compile::Language::triton}) {
      agent::RunPlan defaults; // a rollout's evaluation is a `ptxbench run` turn's
      defaults.loop.language = language;
      host->m_executors[static_cast<std::size_t>(language) - 1] =
          std::make_unique<service::TaskExecutor>(checker, tasks, agent::eval_options(defaults),
                                                  "rollouts");
    }
    rollout::RolloutDeps deps;
    deps.root = root;
    deps.suite = &suite;
    deps.manifest = &*host->m_manifest;
    deps.executor = [raw = host.get()](compile::Language language) -> agent::Executor& {
      return *raw->m_executors[static_cast<std::size_t>(language) - 1];
    };
    deps.live_device = [](compile::Arch arch) { return live_device_text(arch); };
    PTXBENCH_TRY_ASSIGN(host->m_rollouts, rollout::Rollouts::open(std::move(deps)));
    return host;
  }
  rollout::Rollouts* rollouts() { return m_rollouts.get(); }

private:
  RolloutHost() = default;
  std::optional<pack::Manifest> m_manifest;
  std::array<std::unique_ptr<service::TaskExecutor>, 2> m_executors;
  std::unique_ptr<rollout::Rollouts> m_rollouts;
};

// The rollout host of a server whose queue is `tasks`, unless --no-rollouts; exit 2 (a usage
// error) when the folder is another server's.
util::Expected<std::unique_ptr<RolloutHost>>
rollout_host(const ServeCliOptions& o, const std::filesystem::path& default_root,
             const exec::Checker& checker, service::TaskService& tasks, const suite::Suite& suite) {
  if (o.no_rollouts)
    return std::unique_ptr<RolloutHost>();
  return RolloutHost::open(o.rollouts.empty() ? default_root : std::filesystem::path(o.rollouts),
                           checker, tasks, suite);
}

ExitCode rollout_error(const util::Error& error) {
  const ExitCode code = report_error("serve", error);
  return error.kind == util::ErrorKind::conflict ? ExitCode::usage : code;
}

// Wakes wait_for_stop_signal() to restart (called from a worker's thread).
void request_restart() {
  g_restart = true;
  const char byte = 1;
  [[maybe_unused]] const ssize_t written = ::write(g_signal_pipe[1], &byte, 1);
}

// `serve --broker`: this host's GPUs lease tasks from the fleet's queue, and with --port an HTTP
// front submits into that queue, until a signal, or until a GPU's CUDA state breaks: then the
// workers stop (running evaluations record, the broken one's task went back to the queue) and
// the process re-executes itself with the same arguments (docs/service.md "Health").
ExitCode run_fleet(const ServeCliOptions& o, const std::optional<service::HttpOptions>& http,
                   const exec::Checker& checker, const suite::Suite& suite, std::vector<int> gpus) {
  service::FleetHostOptions options;
  options.broker.url = o.broker;
  options.broker.lease = std::chrono::seconds(o.lease_seconds);
  options.gpus = std::move(gpus);
  options.host = o.host_name;
  options.counter_session = counter_session(o);
  options.spare_prepare = spare_prepare(o);
  options.log = log_line;
  options.restart = [](const std::string&) { request_restart(); };
  install_stop_signals();
  std::unique_ptr<service::BrokerService> front;
  std::unique_ptr<RolloutHost> rollouts;
  std::unique_ptr<service::HttpServer> server;
  std::string url;
  if (http) {
    auto connected = service::BrokerService::connect(suite, {options.broker, "http"});
    if (!connected)
      return report_error("serve", connected.error());
    front = std::move(*connected);
    auto host =
        rollout_host(o, util::cache_root() / "fleet-front" / "rollouts", checker, *front, suite);
    if (!host)
      return rollout_error(host.error());
    rollouts = std::move(*host);
    service::HttpOptions front_http = *http;
    front_http.rollouts = rollouts ? rollouts->rollouts() : nullptr;
    front_http.checker = &checker;
    server = std::make_unique<service::HttpServer>(*front, front_http);
    auto bound = server->start();
    if (!bound)
      return report_error("serve", bound.error());
    url = *bound;
  }
  std::unique_ptr<service::FleetHost> host;
  if (!o.no_workers) {
    auto started = service::FleetHost::start(checker, suite, options);
    if (!started)
      return report_error("serve", started.error());
    host = std::move(*started);
  }
  fmt::print("{}\n", http ? url : fleet::pg::redact(o.broker));
  std::fflush(stdout);
  if (http)
    log_line(fmt::format("serving {} in front of the fleet at {}; {}", url,
                         fleet::pg::redact(o.broker), auth_text(*http)));
  if (host) {
    std::string workers;
    for (const std::string& id : host->worker_ids())
      workers += (workers.empty() ? "" : ", ") + id;
    log_line(fmt::format("workers {} take tasks from {}{}", workers, fleet::pg::redact(o.broker),
                         options.gpus.empty() ? "; no GPU: evaluations stop after the static check"
                                              : ""));
  }
  wait_for_stop_signal();
  log_line(g_restart ? "restarting: a GPU broke; running evaluations finish and record first"
                     : "stopping: running evaluations finish and record (a second signal stops "
                       "at once; their leases expire and other workers take them)");
  if (server)
    server->stop();
  host.reset(); // stops the workers, closes their connections and candidate children
  if (!g_restart) {
    log_line("stopped");
    return ExitCode::ok;
  }
  return report_error("serve", exec_self());
}

ExitCode run_serve(const ServeCliOptions& o) {
  // With --broker the workers serve the fleet's queue, and HTTP fronts it only with --port.
  std::optional<service::HttpOptions> http;
  if (!o.broker.empty()) {
    if (auto url = fleet::check_broker_url(o.broker); !url)
      return report_error("serve", url.error());
    if (o.no_workers && !o.port_given)
      return report_error("serve", util::make_error(util::ErrorKind::invalid_input,
                                                    "--no-workers leaves nothing to serve "
                                                    "without --port (an HTTP front)"));
  } else if (o.no_workers) {
    return report_error("serve",
                        util::make_error(util::ErrorKind::invalid_input,
                                         "--no-workers belongs with --broker (an HTTP front "
                                         "for a fleet whose workers run elsewhere)"));
  }
  if (o.broker.empty() || o.port_given) {
    auto options = http_options(o);
    if (!options)
      return report_error("serve", options.error());
    http = std::move(*options);
  }
  Toolchain tools;
  auto suite = tools.suite();
  if (!suite)
    return report_error("serve", suite.error());
  auto checker = tools.checker();
  if (!checker)
    return report_error("serve", checker.error());
  auto gpus = service::parse_gpus(o.gpus, cuda::device_count());
  if (!gpus)
    return report_error("serve", gpus.error());
  if (!o.broker.empty())
    return run_fleet(o, http, **checker, **suite, *gpus);
  service::ServiceOptions options;
  options.state_dir =
      o.state.empty() ? util::cache_root() / "service" : std::filesystem::path(o.state);
  options.gpus = *gpus;
  options.workers_per_device = o.workers_per_gpu;
  options.counter_session = counter_session(o);
  options.spare_prepare = spare_prepare(o);
  options.log = log_line;
  options.keep_finished = std::chrono::hours(o.keep_finished_hours);
  auto evaluation_service = service::Service::start(**checker, **suite, options);
  if (!evaluation_service) {
    const ExitCode code = report_error("serve", evaluation_service.error());
    return held_by_another_server(options.state_dir) ? ExitCode::usage : code;
  }
  auto rollouts =
      rollout_host(o, options.state_dir / "rollouts", **checker, **evaluation_service, **suite);
  if (!rollouts)
    return rollout_error(rollouts.error());
  http->rollouts = *rollouts ? (*rollouts)->rollouts() : nullptr;
  http->checker = *checker;
  service::HttpServer server(**evaluation_service, *http);
  install_stop_signals();
  auto url = server.start();
  if (!url)
    return report_error("serve", url.error());
  fmt::print("{}\n", *url);
  std::fflush(stdout);
  const service::Health health = (*evaluation_service)->health();
  log_line(fmt::format(
      "serving {} with {}; state {}; {} task(s) queued; finished tasks kept {}; {}; "
      "{}{}",
      *url, workers_text(health), options.state_dir.string(), health.queue_size,
      o.keep_finished_hours == 0 ? "forever" : fmt::format("{} hours", o.keep_finished_hours),
      *rollouts ? "rollouts in " + (*rollouts)->rollouts()->root().string() : "no rollouts",
      auth_text(*http), gpus->empty() ? "; no GPU: evaluations stop after the static check" : ""));
  wait_for_stop_signal();
  log_line("stopping: running evaluations finish, queued ones wait for the next start "
           "(a second signal stops at once; running ones are re-queued then)");
  server.stop();
  (*evaluation_service)->stop();
  log_line("stopped");
  return ExitCode::ok;
}

} // namespace

Action setup_serve(CLI::App& sub) {
  auto o = std::make_shared<ServeCliOptions>();
  sub.add_option("--host", o->host,
                 "address to listen on; one other than loopback needs $PTXBENCH_SERVICE_TOKEN "
                 "or --insecure-no-auth")
      ->capture_default_str();
  sub.add_flag("--insecure-no-auth", o->insecure_no_auth,
               "listen beyond loopback without a token (anyone who reaches the port runs code)");
  CLI::Option* port =
      sub.add_option("--port", o->port,
                     "port (0: any free one; the URL is the first line on stdout); with --broker "
                     "it starts an HTTP front that submits into the fleet's queue")
          ->capture_default_str();
  sub.add_option("--gpus", o->gpus,
                 "CUDA devices, one supervisor each, all from this process: all, or indices "
                 "like 0,1; without a GPU one worker runs the static part of every evaluation")
      ->capture_default_str();
  sub.add_option("--workers-per-gpu", o->workers_per_gpu,
                 "worker threads per device sharing its supervisor (more than one overlaps a "
                 "task's static check and untimed phases with another's timing)")
      ->capture_default_str();
  sub.add_option("--counter-session", o->counter_session,
                 "when a spare candidate child opens the GPU's counter session: when-idle (only "
                 "after the GPU was idle), or beside-timing (also beside the trials of an "
                 "evaluation that has counted; docs/evaluation.md \"The counter session\")")
      ->check(CLI::IsMember({"when-idle", "beside-timing"}))
      ->capture_default_str();
  sub.add_option("--spare-prepare", o->spare_prepare,
                 "when the spare candidate child is prepared: beside-evaluation (beside any "
                 "phase of a running evaluation but its timed window), or after-timing (only "
                 "once every running evaluation has timed; docs/evaluation.md \"Spare child\")")
      ->check(CLI::IsMember({"beside-evaluation", "after-timing"}))
      ->capture_default_str();
  sub.add_option("--state", o->state,
                 "folder of the task database (tasks survive restarts; default "
                 "<cache>/service, the cache being $PTXBENCH_CACHE or ~/.cache/ptxbench)");
  sub.add_option("--max-body-mib", o->max_body_mib, "largest request body accepted (413 beyond)")
      ->capture_default_str();
  sub.add_option("--keep-finished-hours", o->keep_finished_hours,
                 "delete finished tasks this many hours after they finished (at start, then "
                 "hourly); 0 keeps them forever")
      ->check(CLI::Range(0, 100 * 365 * 24))
      ->capture_default_str();
  sub.add_option("--broker", o->broker,
                 "take tasks from a fleet's PostgreSQL queue (postgresql://user@host:port/db; the "
                 "password from $PGPASSWORD or ~/.pgpass): one worker per GPU of --gpus, and "
                 "HTTP only with --port (docs/service.md \"A fleet on PostgreSQL\")");
  sub.add_flag("--no-workers", o->no_workers,
               "with --broker and --port: only the HTTP front, no workers on this host");
  sub.add_option("--rollouts", o->rollouts,
                 "folder of the rollouts' run stores (POST /v1/rollouts; default <state>/rollouts, "
                 "or <cache>/fleet-front/rollouts for a fleet's front): `report`, `export` and "
                 "`fixit` read its run folders");
  sub.add_flag("--no-rollouts", o->no_rollouts,
               "keep no rollouts: /v1/prompt and /v1/rollouts answer 404");
  sub.add_option("--lease-seconds", o->lease_seconds,
                 "with --broker: how long a task stays this worker's without a heartbeat (a "
                 "third of it between heartbeats); a dead worker's task is taken over after it")
      ->check(CLI::Range(3, 3600))
      ->capture_default_str();
  sub.add_option("--host-name", o->host_name,
                 "this host's name among the fleet's workers (default: the machine's host name)");
  sub.footer(
      fmt::format("Endpoints (docs/service.md): GET /health, GET /definitions[/NAME[/workloads]], "
                  "POST /evaluate | /sanitize | /profile | /debug (a task id at once), "
                  "GET /tasks/ID?timeout=S (long-poll), POST /tasks/batch, GET /metrics. With ${} "
                  "set, "
                  "every endpoint but / and /health wants `Authorization: Bearer $TOKEN`.",
                  kServiceTokenEnv));
  return [o, port] {
    o->port_given = port->count() > 0;
    return run_serve(*o);
  };
}

} // namespace ptxbench::cli
