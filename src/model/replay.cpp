// The replay provider: plays recorded replies from a JSONL file, in file order, one per call,
// whatever the request. It powers the built-in demo and the tests of everything above the
// model client. Each non-empty line is a reply or an error to return:
//   {"text": "...", "reasoning": "...", "finish_reason": "stop", "latency_ms": 12,
//    "usage": {"input_tokens": 10, "output_tokens": 20, "reasoning_tokens": 5}}
//   {"error": {"kind": "rate_limited", "message": "HTTP 429 ..."}}
// Texts are UTF-8-repaired like live replies. A call after the last line is an invalid_input
// error naming the file and the count, so a test or demo that needs more replies than were
// recorded fails clearly. A client can start later in the file (a resumed trajectory skips the
// replies its earlier calls already took). Thread-safe: concurrent callers take consecutive lines.
#include "model/providers.hpp"
#include "model/utf8.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "util/json_reader.hpp"
#include "util/strings.hpp"

#include <limits>
#include <mutex>
#include <optional>
#include <variant>

namespace ptxbench::model {
namespace {

using Recorded = std::variant<ChatResponse, util::Error>;

Recorded read_error_line(util::JsonReader& in, const Json& line) {
  const Json* error = in.object_member(line, "$", "error");
  if (!error)
    return Recorded{};
  // Read by name against the table: ErrorKind has a retired value, so it is not valued 1..N.
  std::optional<util::ErrorKind> kind;
  if (const Json* name = in.required(*error, "$.error", "kind")) {
    const std::string text = in.string_at(*name, "$.error.kind", util::Emptiness::rejected);
    kind = util::error_kind_from_name(text);
    if (in.ok() && !kind)
      in.fail("$.error.kind", "unknown error kind \"" + text + "\"");
  }
  const std::string message =
      in.optional_string(*error, "$.error", "message", util::Emptiness::allowed).value_or("");
  return util::make_error(kind.value_or(util::ErrorKind::invalid_input), "replay: " + message);
}

std::int64_t token_count(util::JsonReader& in, const Json* usage, std::string_view key) {
  return usage ? in.optional_integer(*usage, "$.usage", key, 0).value_or(0) : 0;
}

ChatResponse read_reply_line(util::JsonReader& in, const Json& line) {
  ChatResponse reply;
  reply.text = sanitize_utf8(in.string(line, "$", "text", util::Emptiness::allowed));
  if (auto reasoning = in.optional_string(line, "$", "reasoning", util::Emptiness::allowed);
      reasoning && !reasoning->empty())
    reply.reasoning = sanitize_utf8(*reasoning);
  reply.finish_reason =
      in.optional_string(line, "$", "finish_reason", util::Emptiness::allowed).value_or("stop");
  reply.latency = std::chrono::duration<double, std::milli>(
      in.optional_number(line, "$", "latency_ms", {0.0, std::numeric_limits<double>::max()})
          .value_or(0.0));
  const Json* usage = in.optional_object(line, "$", "usage");
  reply.usage =
      Usage{token_count(in, usage, "input_tokens"), token_count(in, usage, "output_tokens"),
            token_count(in, usage, "reasoning_tokens")};
  reply.raw = line;
  return reply;
}

// One line of the file, read with its file:line as the origin of any error.
util::Expected<Recorded> parse_line(const Json& line, const std::string& where,
                                    const std::optional<Prices>& prices) {
  util::JsonReader in(where);
  if (!in.expect_object(line, "$"))
    return in.finish(Recorded{});
  if (util::JsonReader::optional(line, "error")) {
    Recorded error = read_error_line(in, line);
    return in.finish(std::move(error));
  }
  ChatResponse reply = read_reply_line(in, line);
  if (prices) {
    reply.cost_usd = cost_usd(reply.usage, *prices);
    reply.cost_source = CostSource::registry_prices;
  }
  return in.finish(Recorded{std::move(reply)});
}

util::Expected<std::vector<Recorded>> load_replies(const ModelSpec& spec) {
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(*spec.replay_file));
  std::vector<Recorded> replies;
  auto lines = util::split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (util::trim(lines[i]).empty())
      continue;
    std::string where = spec.replay_file->string() + ":" + std::to_string(i + 1);
    Json json = Json::parse(sanitize_utf8(lines[i]), nullptr, false);
    if (json.is_discarded())
      return util::make_error(util::ErrorKind::invalid_input, where + ": not valid JSON");
    PTXBENCH_TRY_ASSIGN(auto recorded, parse_line(json, where, spec.prices));
    replies.push_back(std::move(recorded));
  }
  return replies;
}

class ReplayClient final : public ModelClient {
public:
  ReplayClient(ModelSpec spec, std::vector<Recorded> replies, std::size_t start)
      : m_spec(std::move(spec)), m_replies(std::move(replies)), m_next(start) {}

  util::Expected<ChatResponse> complete(const ChatRequest& request) override {
    auto started = std::chrono::system_clock::now();
    std::optional<Recorded> next = take();
    if (!next)
      return util::make_error(util::ErrorKind::invalid_input,
                              "replay file " + m_spec.replay_file->string() + " exhausted after " +
                                  std::to_string(m_replies.size()) + " replies");
    report(request, *next, started);
    if (auto* error = std::get_if<util::Error>(&*next))
      return *error;
    return std::get<ChatResponse>(std::move(*next));
  }
  std::string_view provider() const override { return "replay"; }
  const std::string& model_name() const override { return m_spec.name; }

private:
  std::optional<Recorded> take() {
    std::lock_guard lock(m_mutex);
    if (m_next >= m_replies.size())
      return std::nullopt;
    return m_replies[m_next++];
  }

  void report(const ChatRequest& request, const Recorded& recorded,
              std::chrono::system_clock::time_point started) const {
    if (!request.on_attempt)
      return;
    AttemptRecord record;
    record.provider = "replay";
    record.model = m_spec.name;
    record.started_at = started;
    if (const auto* error = std::get_if<util::Error>(&recorded))
      record.error = *error;
    if (const auto* reply = std::get_if<ChatResponse>(&recorded)) {
      record.response = reply;
      record.latency = reply->latency;
    }
    std::string messages;
    for (const auto& m : request.messages)
      messages += m.content;
    record.request_sha256 = util::sha256_hex(messages);
    request.on_attempt(record);
  }

  ModelSpec m_spec;
  std::vector<Recorded> m_replies;
  std::mutex m_mutex;
  std::size_t m_next = 0;
};

} // namespace

util::Expected<std::unique_ptr<ModelClient>> make_replay(const ModelSpec& spec, std::size_t start) {
  if (!spec.replay_file)
    return util::make_error(util::ErrorKind::invalid_input,
                            "model " + spec.name + ": replay provider needs replay_file");
  PTXBENCH_TRY_ASSIGN(auto replies, load_replies(spec));
  return std::unique_ptr<ModelClient>(new ReplayClient(spec, std::move(replies), start));
}

} // namespace ptxbench::model
