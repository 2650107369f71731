#include "model/retry.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <thread>

namespace ptxbench::model {
namespace {

class ThreadSleeper final : public Sleeper {
public:
  void sleep_for(std::chrono::milliseconds delay) override { std::this_thread::sleep_for(delay); }
};

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0)
    return std::nullopt;
  return value;
}

// IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
std::optional<std::chrono::system_clock::time_point> parse_http_date(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0')
    return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

} // namespace

Sleeper& real_sleeper() {
  static ThreadSleeper sleeper;
  return sleeper;
}

Retry retry_for_status(int status) {
  bool retry = status == 408 || status == 409 || status == 429 || (status >= 500 && status <= 599);
  return retry ? Retry::yes : Retry::no;
}

std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response,
                                                     std::chrono::system_clock::time_point now) {
  if (auto ms = response.header("retry-after-ms"))
    if (auto value = parse_integer(*ms))
      return std::chrono::milliseconds(*value);
  auto header = response.header("retry-after");
  if (!header)
    return std::nullopt;
  if (auto seconds = parse_integer(*header))
    return std::chrono::seconds(*seconds);
  if (auto date = parse_http_date(*header))
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(*date - now));
  return std::nullopt;
}

std::chrono::milliseconds next_delay(const RetryPolicy& policy, int failed_attempts,
                                     std::optional<std::chrono::milliseconds> requested,
                                     std::mt19937_64& rng) {
  using std::chrono::milliseconds;
  if (requested) {
    milliseconds wait = std::min(*requested, policy.max_retry_after);
    std::uniform_int_distribution<std::int64_t> jitter(0, wait.count() / 10);
    return wait + milliseconds(jitter(rng));
  }
  int shift = std::clamp(failed_attempts - 1, 0, 30);
  std::int64_t base = policy.initial_delay.count() << shift;
  std::int64_t capped = std::min(base, policy.max_delay.count());
  std::uniform_int_distribution<std::int64_t> upper_half(capped / 2, capped);
  return milliseconds(upper_half(rng));
}

} // namespace ptxbench::model
