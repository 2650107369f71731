#include "protocol/protocol.hpp"

#include "util/json_number.hpp"

#include <array>
#include <cmath>
#include <stdexcept>
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

measure::TimingMode parse_mode(const std::string& name) {
  if (name == to_string(measure::TimingMode::batched))
    return measure::TimingMode::batched;
  if (name == to_string(measure::TimingMode::strict))
    return measure::TimingMode::strict;
  throw std::invalid_argument("unknown timing mode '" + name + "'");
}

util::Error bad(std::string_view what, std::string_view detail) {
  return util::make_error(util::ErrorKind::bad_response,
                          std::string(what) + ": " + std::string(detail));
}

Json handles_json(const std::vector<SetHandles>& sets) {
  Json out = Json::array();
  for (const SetHandles& set : sets) {
    Json buffers = Json::array();
    for (const BufferHandle& b : set)
      buffers.push_back({{"ipc", b.ipc}, {"bytes", b.bytes}, {"output", b.output}});
    out.push_back(std::move(buffers));
  }
  return out;
}

std::vector<SetHandles> handles_from(const Json& sets) {
  std::vector<SetHandles> out;
  for (const Json& set : sets) {
    SetHandles buffers;
    for (const Json& b : set)
      buffers.push_back({b.at("ipc").get<std::string>(), b.at("bytes").get<std::uint64_t>(),
                         b.at("output").get<bool>()});
    out.push_back(std::move(buffers));
  }
  return out;
}

RequestOp parse_op(const std::string& name) {
  for (const auto& [op, spelling] : kOps)
    if (spelling == name)
      return op;
  throw std::invalid_argument("unknown op '" + name + "'");
}

ChildError parse_child_error(const std::string& name) {
  for (const ChildErrorInfo& info : kChildErrors)
    if (info.name == name)
      return info.error;
  throw std::invalid_argument("unknown error kind '" + name + "'");
}

Json kernels_json(const std::vector<KernelSeen>& kernels) {
  Json out = Json::array();
  for (const KernelSeen& k : kernels)
    out.push_back({{"name", k.name},
                   {"stream", k.stream_id},
                   {"duration_ms", util::number_json(k.duration_ms)}});
  return out;
}

Json numbers_json(const std::vector<double>& values) {
  Json out = Json::array();
  for (double value : values)
    out.push_back(util::number_json(value));
  return out;
}

double number_at(const Json& j, const char* key) {
  auto value = util::number_from_json(j.at(key), util::NonFiniteSpelling::exact);
  if (!value)
    throw std::invalid_argument(std::string("\"") + key + "\" is not a number");
  return *value;
}

std::vector<double> numbers_from(const Json& j) {
  std::vector<double> out;
  for (const Json& value : j) {
    auto number = util::number_from_json(value, util::NonFiniteSpelling::exact);
    if (!number)
      throw std::invalid_argument("a list holds " + value.dump() + ", not a number");
    out.push_back(*number);
  }
  return out;
}

std::vector<KernelSeen> kernels_from(const Json& j) {
  std::vector<KernelSeen> out;
  for (const Json& k : j)
    out.push_back({k.at("name").get<std::string>(), k.at("stream").get<std::uint32_t>(),
                   number_at(k, "duration_ms")});
  return out;
}

Json kernel_sets_json(const std::vector<KernelSet>& sets) {
  Json out = Json::array();
  for (const KernelSet& set : sets)
    out.push_back({{"kernels", set.kernels}, {"calls", set.calls}});
  return out;
}

std::vector<KernelSet> kernel_sets_from(const Json& j) {
  std::vector<KernelSet> out;
  for (const Json& set : j)
    out.push_back({set.at("kernels").get<std::vector<std::string>>(), set.at("calls").get<int>()});
  return out;
}

Reply reply_from(const Json& j) {
  Reply r;
  r.id = j.value("id", std::uint64_t{0});
  r.ok = j.at("ok").get<bool>();
  r.error = parse_child_error(j.at("error").get<std::string>());
  r.message = j.at("message").get<std::string>();
  r.invoke_status = j.at("invoke_status").get<int>();
  r.cuda_error = j.at("cuda_error").get<std::string>();
  if (j.contains("refused"))
    r.refused = j.at("refused").get<std::vector<std::string>>();
  if (j.contains("modules"))
    for (const Json& m : j.at("modules"))
      r.modules.push_back(
          {m.at("sha256").get<std::string>(), m.at("functions").get<std::vector<std::string>>()});
  if (j.contains("call")) {
    const Json& c = j.at("call");
    r.call_ms = number_at(c, "latency_ms");
    r.kernels = kernels_from(c.at("kernels"));
  }
  if (!j.contains("time"))
    return r;
  const Json& t = j.at("time");
  r.latencies_ms = numbers_from(t.at("latencies_ms"));
  r.event_ms = numbers_from(t.at("event_ms"));
  r.late_work = t.at("late_work").get<bool>();
  r.last_set = t.at("last_set").get<int>();
  r.mode = parse_mode(t.at("mode").get<std::string>());
  r.strict_reason = t.at("strict_reason").get<std::string>();
  r.kernels = kernels_from(t.at("kernels"));
  r.kernel_sets = kernel_sets_from(t.at("kernel_sets"));
  return r;
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
    j["counts"] = *reply.counts;
  if (reply.startup)
    j["startup"] = *reply.startup;
  if (reply.counter_session_open)
    j["counter_session_open"] = true;
  if (reply.jit_ms)
    j["jit_ms"] = util::number_json(*reply.jit_ms);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

util::Expected<Request> decode_request(std::string_view line) {
  try {
    const Json j = Json::parse(line);
    Request r;
    r.op = parse_op(j.at("op").get<std::string>());
    r.id = j.value("id", std::uint64_t{0});
    if (r.op == RequestOp::load) {
      r.library = j.at("library").get<std::string>();
      r.signature = j.at("signature").get<std::string>();
      r.sets = handles_from(j.at("sets"));
      r.scalars = j.at("scalars").get<std::vector<std::uint64_t>>();
      r.var_axes = j.at("var_axes").get<std::vector<std::int64_t>>();
      r.binding = j.value("binding", std::string());
    }
    if (r.op == RequestOp::call || r.op == RequestOp::count)
      r.set = j.at("set").get<int>();
    if (r.op == RequestOp::time) {
      r.warmup = j.at("warmup").get<int>();
      r.iterations = j.at("iterations").get<int>();
      r.first_call = j.at("first_call").get<int>();
      r.mode = parse_mode(j.at("mode").get<std::string>());
      r.calibrate = j.value("calibrate", false);
    }
    if (r.op == RequestOp::prepare)
      r.counter_session = j.value("counter_session", false);
    return r;
  } catch (const std::exception& e) {
    return bad("malformed request", e.what());
  }
}

util::Expected<Reply> decode_reply(std::string_view line) {
  try {
    const Json j = Json::parse(line);
    if (j.contains("modules") && !j.at("modules").is_array())
      return bad("malformed reply from the candidate process", "\"modules\" is not an array");
    Reply r = reply_from(j);
    if (j.contains("counts")) {
      if (!j.at("counts").is_object())
        return bad("malformed reply from the candidate process", "\"counts\" is not an object");
      r.counts = j.at("counts");
    }
    if (j.contains("startup"))
      r.startup = j.at("startup");
    if (j.contains("counter_session_open"))
      r.counter_session_open = j.at("counter_session_open").get<bool>();
    if (j.contains("jit_ms"))
      r.jit_ms = number_at(j, "jit_ms");
    return r;
  } catch (const std::exception& e) {
    return bad("malformed reply from the candidate process", e.what());
  }
}

} // namespace ptxbench::protocol
