#include "protocol/protocol.hpp"

#include "util/json_number.hpp"
#include "util/json_reader.hpp"

#include <array>
#include <utility>

namespace ptxbench::protocol {
namespace {

using Json = trace::Json;

constexpr std::array<std::pair<RequestOp, std::string_view>, 8> kOps{{
    {RequestOp::load, "load"},
    {RequestOp::call, "call"},
    {RequestOp::time, "time"},
    {RequestOp::count, "count"},
    {RequestOp::exit, "exit"},
    {RequestOp::prepare, "prepare"},
    {RequestOp::end_session, "end_session"},
    {RequestOp::ping, "ping"},
}};

constexpr std::string_view kMalformedRequest = "malformed request";
constexpr std::string_view kMalformedReply = "malformed reply from the candidate process";

Json handles_json(const std::vector<SetHandles>& sets) {
  Json out = Json::array();
  for (const SetHandles& set : sets) {
    Json buffers = Json::array();
    for (const BufferHandle& b : set) {
      Json buffer = {{"ipc", b.ipc}, {"bytes", b.bytes}, {"output", b.output}};
      if (b.span > 0)
        buffer["span"] = b.span;
      buffers.push_back(std::move(buffer));
    }
    out.push_back(std::move(buffers));
  }
  return out;
}

Json kernels_json(const std::vector<KernelSeen>& kernels) {
  Json out = Json::array();
  for (const KernelSeen& k : kernels)
    out.push_back({{"name", k.name},
                   {"stream", k.stream_id},
                   {"duration_ms", util::number_json(k.duration_ms)},
                   {"launch", k.launch}});
  return out;
}

Json numbers_json(const std::vector<double>& values) {
  Json out = Json::array();
  for (double value : values)
    out.push_back(util::number_json(value));
  return out;
}

Json kernel_sets_json(const std::vector<KernelSet>& sets) {
  Json out = Json::array();
  for (const KernelSet& set : sets)
    out.push_back({{"kernels", set.kernels}, {"calls", set.calls}});
  return out;
}

// The decoders below read the line's JSON into the caller's reader, which keeps the first
// problem and names its JSON path; unknown keys are ignored, as a newer peer may send more.
using util::Emptiness;
using util::IntegerRange;
using util::JsonReader;
using util::key_path;

constexpr IntegerRange kInt = IntegerRange::of<int>();
constexpr auto kExact = util::NonFiniteSpelling::exact;

int int_member(JsonReader& in, const Json& j, const std::string& path, std::string_view key) {
  return static_cast<int>(in.integer(j, path, key, kInt));
}

std::string text(JsonReader& in, const Json& j, const std::string& path, std::string_view key) {
  return in.string(j, path, key, Emptiness::allowed);
}

double number_member(JsonReader& in, const Json& j, const std::string& path, std::string_view key) {
  const Json* value = in.required(j, path, key);
  return value ? in.number_or_nonfinite_at(*value, key_path(path, key), kExact) : 0.0;
}

// Calls `read(element, element_path)` for each element of the required array `key`.
template <typename Read>
void each(JsonReader& in, const Json& j, const std::string& path, std::string_view key, Read read) {
  const Json* list = in.array_member(j, path, key);
  const std::string list_path = key_path(path, key);
  for (std::size_t i = 0; list && in.ok() && i < list->size(); ++i)
    read((*list)[i], util::index_path(list_path, i));
}

BufferHandle read_buffer(JsonReader& in, const Json& b, const std::string& path) {
  if (!in.expect_object(b, path))
    return {};
  return {text(in, b, path, "ipc"), in.unsigned_integer(b, path, "bytes"),
          in.boolean(b, path, "output"), in.optional_unsigned(b, path, "span").value_or(0)};
}

std::vector<SetHandles> read_sets(JsonReader& in, const Json& j, const std::string& path) {
  std::vector<SetHandles> sets;
  each(in, j, path, "sets", [&](const Json& set, const std::string& set_path) {
    SetHandles buffers;
    if (!in.expect_array(set, set_path))
      return;
    for (std::size_t i = 0; in.ok() && i < set.size(); ++i)
      buffers.push_back(read_buffer(in, set[i], util::index_path(set_path, i)));
    sets.push_back(std::move(buffers));
  });
  return sets;
}

void read_load(JsonReader& in, const Json& j, Request& r) {
  r.library = text(in, j, "$", "library");
  r.signature = text(in, j, "$", "signature");
  r.sets = read_sets(in, j, "$");
  each(in, j, "$", "scalars", [&](const Json& bits, const std::string& path) {
    r.scalars.push_back(in.unsigned_at(bits, path));
  });
  each(in, j, "$", "var_axes", [&](const Json& axis, const std::string& path) {
    r.var_axes.push_back(in.integer_at(axis, path));
  });
  r.binding = in.optional_string(j, "$", "binding", Emptiness::allowed).value_or("");
}

void read_time_request(JsonReader& in, const Json& j, Request& r) {
  r.warmup = int_member(in, j, "$", "warmup");
  r.iterations = int_member(in, j, "$", "iterations");
  r.first_call = int_member(in, j, "$", "first_call");
  r.mode =
      in.enumerator<measure::TimingMode, 2>(j, "$", "mode", measure::to_string).value_or(r.mode);
  r.calibrate = in.optional_boolean(j, "$", "calibrate").value_or(false);
}

void read_request(JsonReader& in, const Json& j, Request& r) {
  if (!in.expect_object(j, "$"))
    return;
  const auto op = in.enumerator<RequestOp, kOps.size()>(j, "$", "op", to_string);
  r.op = op.value_or(r.op);
  r.id = in.optional_unsigned(j, "$", "id").value_or(0);
  if (!op)
    return;
  if (r.op == RequestOp::load)
    read_load(in, j, r);
  if (r.op == RequestOp::call || r.op == RequestOp::count)
    r.set = int_member(in, j, "$", "set");
  if (r.op == RequestOp::time)
    read_time_request(in, j, r);
  if (r.op == RequestOp::prepare)
    r.counter_session = in.optional_boolean(j, "$", "counter_session").value_or(false);
}

std::vector<KernelSeen> read_kernels(JsonReader& in, const Json& j, const std::string& path) {
  std::vector<KernelSeen> kernels;
  each(in, j, path, "kernels", [&](const Json& k, const std::string& k_path) {
    if (!in.expect_object(k, k_path))
      return;
    kernels.push_back({text(in, k, k_path, "name"),
                       static_cast<std::uint32_t>(
                           in.integer(k, k_path, "stream", IntegerRange::of<std::uint32_t>())),
                       number_member(in, k, k_path, "duration_ms"),
                       in.optional_string(k, k_path, "launch", Emptiness::allowed).value_or("")});
  });
  return kernels;
}

std::vector<double> read_numbers(JsonReader& in, const Json& j, const std::string& path,
                                 std::string_view key) {
  std::vector<double> numbers;
  each(in, j, path, key, [&](const Json& value, const std::string& value_path) {
    numbers.push_back(in.number_or_nonfinite_at(value, value_path, kExact));
  });
  return numbers;
}

std::vector<KernelSet> read_kernel_sets(JsonReader& in, const Json& j, const std::string& path) {
  std::vector<KernelSet> sets;
  each(in, j, path, "kernel_sets", [&](const Json& set, const std::string& set_path) {
    if (in.expect_object(set, set_path))
      sets.push_back({in.strings(set, set_path, "kernels", Emptiness::allowed),
                      int_member(in, set, set_path, "calls")});
  });
  return sets;
}

void read_modules(JsonReader& in, const Json& j, Reply& r) {
  if (!JsonReader::optional(j, "modules"))
    return;
  each(in, j, "$", "modules", [&](const Json& m, const std::string& path) {
    if (in.expect_object(m, path))
      r.modules.push_back(
          {text(in, m, path, "sha256"), in.strings(m, path, "functions", Emptiness::allowed)});
  });
}

void read_call(JsonReader& in, const Json& j, Reply& r) {
  const Json* call = in.optional_object(j, "$", "call");
  if (!call)
    return;
  r.call_ms = number_member(in, *call, "$.call", "latency_ms");
  r.kernels = read_kernels(in, *call, "$.call");
}

void read_time(JsonReader& in, const Json& j, Reply& r) {
  const Json* time = in.optional_object(j, "$", "time");
  if (!time)
    return;
  const std::string path = "$.time";
  r.latencies_ms = read_numbers(in, *time, path, "latencies_ms");
  r.event_ms = read_numbers(in, *time, path, "event_ms");
  r.late_work = in.boolean(*time, path, "late_work");
  r.last_set = int_member(in, *time, path, "last_set");
  r.mode = in.enumerator<measure::TimingMode, 2>(*time, path, "mode", measure::to_string)
               .value_or(r.mode);
  r.strict_reason = text(in, *time, path, "strict_reason");
  r.kernels = read_kernels(in, *time, path);
  r.kernel_sets = read_kernel_sets(in, *time, path);
}

// counts (an object), startup (any JSON), counter_session_open, jit_ms.
void read_extras(JsonReader& in, const Json& j, Reply& r) {
  if (const Json* counts = in.optional_object(j, "$", "counts")) {
    auto decoded = counts_from_json(*counts);
    if (decoded)
      r.counts = std::move(*decoded);
    else
      in.fail("$.counts", decoded.error().message);
  }
  if (const Json* startup = JsonReader::optional(j, "startup"))
    r.startup = *startup;
  r.counter_session_open = in.optional_boolean(j, "$", "counter_session_open").value_or(false);
  if (JsonReader::optional(j, "jit_ms"))
    r.jit_ms = number_member(in, j, "$", "jit_ms");
}

void read_reply(JsonReader& in, const Json& j, Reply& r) {
  if (!in.expect_object(j, "$"))
    return;
  r.id = in.optional_unsigned(j, "$", "id").value_or(0);
  r.ok = in.boolean(j, "$", "ok");
  r.error = in.enumerator<ChildError, kChildErrors.size()>(j, "$", "error", to_string)
                .value_or(ChildError::none);
  r.message = text(in, j, "$", "message");
  r.invoke_status = int_member(in, j, "$", "invoke_status");
  r.cuda_error = text(in, j, "$", "cuda_error");
  r.refused = in.string_list(j, "$", "refused", Emptiness::allowed);
  read_modules(in, j, r);
  r.stream_ordered_frees = in.optional_unsigned(j, "$", "stream_ordered_frees").value_or(0);
  read_call(in, j, r);
  read_time(in, j, r);
  read_extras(in, j, r);
}

// The line's JSON, or an error; never throws.
util::Expected<Json> parse_line(std::string_view line, std::string_view what) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return util::make_error(util::ErrorKind::bad_response, std::string(what) + ": not JSON");
  return j;
}

} // namespace

std::string_view to_string(RequestOp op) {
  for (const auto& [value, spelling] : kOps)
    if (value == op)
      return spelling;
  return "unknown";
}

std::string_view to_string(ChildError error) {
  return kChildErrors[static_cast<std::size_t>(error) - 1].name;
}

Reply Reply::failure(ChildError error, std::string message) {
  Reply reply;
  reply.ok = false;
  reply.error = error;
  reply.message = std::move(message);
  return reply;
}

std::string encode(const Request& request) {
  Json j{{"op", to_string(request.op)}, {"id", request.id}};
  switch (request.op) {
  case RequestOp::load:
    j["library"] = request.library;
    j["signature"] = request.signature;
    j["sets"] = handles_json(request.sets);
    j["scalars"] = request.scalars;
    j["var_axes"] = request.var_axes;
    if (!request.binding.empty())
      j["binding"] = request.binding;
    break;
  case RequestOp::call:
  case RequestOp::count:
    j["set"] = request.set;
    break;
  case RequestOp::time:
    j["warmup"] = request.warmup;
    j["iterations"] = request.iterations;
    j["first_call"] = request.first_call;
    j["mode"] = to_string(request.mode);
    if (request.calibrate)
      j["calibrate"] = true;
    break;
  case RequestOp::prepare:
    j["counter_session"] = request.counter_session;
    break;
  case RequestOp::exit:
  case RequestOp::end_session:
  case RequestOp::ping:
    break;
  }
  return j.dump();
}

std::string encode(const Reply& reply) {
  Json j{{"id", reply.id},
         {"ok", reply.ok},
         {"error", to_string(reply.error)},
         {"message", reply.message},
         {"invoke_status", reply.invoke_status},
         {"cuda_error", reply.cuda_error}};
  if (!reply.refused.empty())
    j["refused"] = reply.refused;
  if (!reply.modules.empty()) {
    Json modules = Json::array();
    for (const ModuleSeen& m : reply.modules)
      modules.push_back({{"sha256", m.sha256}, {"functions", m.functions}});
    j["modules"] = std::move(modules);
  }
  if (reply.stream_ordered_frees > 0)
    j["stream_ordered_frees"] = reply.stream_ordered_frees;
  if (reply.call_ms)
    j["call"] = {{"latency_ms", util::number_json(*reply.call_ms)},
                 {"kernels", kernels_json(reply.kernels)}};
  if (reply.last_set >= 0)
    j["time"] = {{"latencies_ms", numbers_json(reply.latencies_ms)},
                 {"event_ms", numbers_json(reply.event_ms)},
                 {"late_work", reply.late_work},
                 {"last_set", reply.last_set},
                 {"kernels", kernels_json(reply.kernels)},
                 {"kernel_sets", kernel_sets_json(reply.kernel_sets)},
                 {"mode", to_string(reply.mode)},
                 {"strict_reason", reply.strict_reason}};
  if (reply.counts)
    j["counts"] = to_json(*reply.counts);
  if (reply.startup)
    j["startup"] = *reply.startup;
  if (reply.counter_session_open)
    j["counter_session_open"] = true;
  if (reply.jit_ms)
    j["jit_ms"] = util::number_json(*reply.jit_ms);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

util::Expected<Request> decode_request(std::string_view line) {
  PTXBENCH_TRY_ASSIGN(auto j, parse_line(line, kMalformedRequest));
  JsonReader in(std::string(kMalformedRequest), util::ErrorKind::bad_response);
  Request r;
  read_request(in, j, r);
  return in.finish(std::move(r));
}

util::Expected<Reply> decode_reply(std::string_view line) {
  PTXBENCH_TRY_ASSIGN(auto j, parse_line(line, kMalformedReply));
  JsonReader in(std::string(kMalformedReply), util::ErrorKind::bad_response);
  Reply r;
  read_reply(in, j, r);
  return in.finish(std::move(r));
}

} // namespace ptxbench::protocol
