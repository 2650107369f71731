// Retrying model calls.
//
// Problem: model APIs fail transiently all the time — 429 when a rate limit is hit, 500/502/
// 503/504 and Anthropic's 529 when a backend is overloaded, connections reset, responses that
// never come. A benchmark run must ride these out without hammering a struggling endpoint,
// without waiting forever, and without confusing them with the model's own failures.
//
// Approach: a call is at most `max_attempts` HTTP attempts (registry max_attempts, default 6).
// Retried: transport failures, timeouts, 408, 409, 429, 5xx and 529. Not retried: other 4xx
// (our request is wrong, the key is bad, the context is too long — repeating cannot help) and
// replies that arrive but cannot be understood (bad_response, including an oversized body:
// a second attempt costs money again). Before attempt n+1 the client sleeps
// min(max_delay, initial_delay·2^(n-1)), jittered uniformly over its upper half so that many
// trajectories hitting one limit spread out. A Retry-After (seconds or HTTP date) or
// retry-after-ms header replaces that delay, capped at max_retry_after, plus a little jitter.
//
// Invariants: the attempt count is bounded; the final error keeps the kind of the last
// failure (timeout, transport, http_status, rate_limited, bad_response), so the caller can
// tell infrastructure failures from model failures; every attempt is reported to the
// request's observer, whatever its outcome.
#pragma once

#include "model/http_transport.hpp"

#include <chrono>
#include <optional>
#include <random>
#include <string_view>

namespace ptxbench::model {

struct RetryPolicy {
  int max_attempts = 6;
  std::chrono::milliseconds initial_delay{2000};
  std::chrono::milliseconds max_delay{std::chrono::seconds(60)};
  std::chrono::milliseconds max_retry_after{std::chrono::minutes(5)};
};

// Sleeping between attempts, behind an interface; the real one blocks the calling thread.
class Sleeper {
public:
  virtual ~Sleeper() = default;
  virtual void sleep_for(std::chrono::milliseconds delay) = 0;
};
Sleeper& real_sleeper();

enum class Retry : std::uint8_t { yes = 1, no = 2 };

// Whether an HTTP status is worth another attempt (429, 408, 409, 5xx, 529).
Retry retry_for_status(int status);

// The wait a response asks for: retry-after-ms, else Retry-After as seconds or an HTTP date.
std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response,
                                                     std::chrono::system_clock::time_point now);

// The wait before the next attempt after `failed_attempts` failures (>= 1).
std::chrono::milliseconds next_delay(const RetryPolicy& policy, int failed_attempts,
                                     std::optional<std::chrono::milliseconds> requested,
                                     std::mt19937_64& rng);

} // namespace ptxbench::model
