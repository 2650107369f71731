#include "protocol/protocol.hpp"
#include "util/json_number.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

namespace ptxbench::protocol {
namespace {

TEST(Protocol, LoadRequestRoundTripsHandlesScalarsAndAxes) {
  Request load;
  load.op = RequestOp::load;
  load.library = "/tmp/kernel.so";
  load.signature = "void run(const float* x, float* y, int64_t n, cudaStream_t stream)";
  load.sets = {{{"ab01", 64, false}, {"cd02", 32, true}},
               {{"ef03", 64, false}, {"0a04", 32, true}}};
  load.scalars = {0x3DB5A89Bull, 0xFFFFFFFFFFFFFFFFull};
  load.var_axes = {8192, 1};
  auto decoded = decode_request(encode(load));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->op, RequestOp::load);
  EXPECT_EQ(decoded->library, load.library);
  EXPECT_EQ(decoded->signature, load.signature);
  ASSERT_EQ(decoded->sets.size(), 2u);
  EXPECT_EQ(decoded->sets[1][1].ipc, "0a04");
  EXPECT_TRUE(decoded->sets[1][1].output);
  EXPECT_EQ(decoded->sets[0][0].bytes, 64u);
  EXPECT_EQ(decoded->sets[0][0].span, 0u) << "shared by CUDA IPC: no span";
  EXPECT_EQ(decoded->scalars, load.scalars);
  EXPECT_EQ(decoded->var_axes, load.var_axes);
}

TEST(Protocol, ABufferSharedByDescriptorCarriesItsSpanAndNoHandle) {
  Request load;
  load.op = RequestOp::load;
  load.sets = {{{"", 100, false, 2u << 20}, {"", 0, true, 2u << 20}}};
  const std::string line = encode(load);
  EXPECT_NE(line.find(R"("span":2097152)"), std::string::npos) << line;
  auto decoded = decode_request(line);
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_EQ(decoded->sets.size(), 1u);
  EXPECT_EQ(decoded->sets[0][0].span, 2u << 20);
  EXPECT_EQ(decoded->sets[0][0].bytes, 100u);
  EXPECT_TRUE(decoded->sets[0][0].ipc.empty());
  EXPECT_TRUE(decoded->sets[0][1].output);
  // A span that is not a number is a malformed request naming the member.
  std::string wrong = line;
  wrong.replace(wrong.find("2097152"), 7, R"("big")");
  auto bad = decode_request(wrong);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("span"), std::string::npos) << bad.error().message;
}

TEST(Protocol, ATritonLoadCarriesItsBindingAndItsReplyTheWarmUpTime) {
  Request load;
  load.op = RequestOp::load;
  load.library = "/tmp/eval/kernel.py";
  load.signature = "def run(A, B)";
  load.binding = R"({"params":["A","B"]})";
  auto decoded = decode_request(encode(load));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->binding, load.binding);
  Request plain = load;
  plain.binding.clear();
  EXPECT_EQ(encode(plain).find("binding"), std::string::npos);
  EXPECT_EQ(decode_request(encode(plain))->binding, "");

  Reply reply;
  reply.jit_ms = 1655.9;
  auto back = decode_reply(encode(reply));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->jit_ms);
  EXPECT_DOUBLE_EQ(*back->jit_ms, 1655.9);
  EXPECT_FALSE(decode_reply(encode(Reply{}))->jit_ms);
  EXPECT_FALSE(decode_reply(R"({"ok":true,"error":"none","message":"","invoke_status":0,)"
                            R"("cuda_error":"","jit_ms":"soon"})"));
}

TEST(Protocol, CallAndTimeRequestsKeepTheirArguments) {
  Request call;
  call.op = RequestOp::call;
  call.set = 2;
  EXPECT_EQ(decode_request(encode(call))->set, 2);
  Request time;
  time.op = RequestOp::time;
  time.warmup = 3;
  time.iterations = 7;
  time.first_call = 13;
  auto decoded = decode_request(encode(time));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->warmup, 3);
  EXPECT_EQ(decoded->iterations, 7);
  EXPECT_EQ(decoded->first_call, 13);
  // A time request without its rotation position is malformed, not silently position 0.
  EXPECT_FALSE(decode_request(R"({"op":"time","warmup":1,"iterations":2,"mode":"strict"})"));
}

TEST(Protocol, TimeRequestCarriesTheTimingModeAndPrepareAsksForTheCounterSessionOrNot) {
  Request time;
  time.op = RequestOp::time;
  time.mode = measure::TimingMode::strict;
  auto decoded = decode_request(encode(time));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->mode, measure::TimingMode::strict);
  Request prepare;
  prepare.op = RequestOp::prepare;
  EXPECT_EQ(encode(prepare), R"({"op":"prepare","id":0,"counter_session":false})");
  EXPECT_EQ(decode_request(encode(prepare))->op, RequestOp::prepare);
  prepare.counter_session = true;
  EXPECT_TRUE(decode_request(encode(prepare))->counter_session);
  EXPECT_FALSE(decode_request(R"({"op":"prepare"})")->counter_session);
  EXPECT_FALSE(decode_request(R"({"op":"prepare","counter_session":"yes"})"));
  EXPECT_FALSE(
      decode_request(R"({"op":"time","warmup":1,"iterations":2,"first_call":0,"mode":"sloppy"})"));
}

TEST(Protocol, TimeReplySaysWhichModeTimedTheTrialAndWhy) {
  Reply reply;
  reply.last_set = 0;
  reply.mode = measure::TimingMode::strict;
  reply.strict_reason = "call 3: kernel `k` started 2.0 µs before its boundary ended";
  auto decoded = decode_reply(encode(reply));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->mode, measure::TimingMode::strict);
  EXPECT_EQ(decoded->strict_reason, reply.strict_reason);
}

TEST(Protocol, PrepareReplyCarriesStartupSteps) {
  Reply reply;
  reply.startup = trace::Json{{"cuda_driver", 80.5}, {"context", 21.0}};
  auto decoded = decode_reply(encode(reply));
  ASSERT_TRUE(decoded && decoded->startup);
  EXPECT_EQ((*decoded->startup)["context"].get<double>(), 21.0);
  EXPECT_FALSE(decoded->counter_session_open);
  reply.counter_session_open = true;
  EXPECT_TRUE(decode_reply(encode(reply))->counter_session_open);
  EXPECT_FALSE(decode_reply(R"({"ok":true,"error":"none","message":"","invoke_status":0,)"
                            R"("cuda_error":"","counter_session_open":1})"));
}

TEST(Protocol, TheRequestsIdTravelsThereAndBackInTheReply) {
  Request ping;
  ping.op = RequestOp::ping;
  ping.id = 0xfedcba9876543210ULL;
  auto request = decode_request(encode(ping));
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->op, RequestOp::ping);
  EXPECT_EQ(request->id, ping.id);
  Reply answer;
  answer.id = request->id;
  auto reply = decode_reply(encode(answer));
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(reply->id, ping.id);
}

TEST(Protocol, RequestsAreOneLine) {
  Request load;
  load.op = RequestOp::load;
  load.signature = "line one\nline two";
  EXPECT_EQ(encode(load).find('\n'), std::string::npos);
}

TEST(Protocol, TimeReplyRoundTripsLatenciesKernelsAndLateWork) {
  Reply reply;
  reply.latencies_ms = {0.5, 0.25};
  reply.event_ms = {0.51, 0.26};
  reply.late_work = true;
  reply.last_set = 1;
  reply.kernels = {
      {"_Z6kernelv", 7, 0.2, "grid 132x1x1 block 384x1x1 cluster 1x1x1 smem 0+1024 B"}};
  auto decoded = decode_reply(encode(reply));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_TRUE(decoded->ok);
  EXPECT_EQ(decoded->latencies_ms, reply.latencies_ms);
  EXPECT_EQ(decoded->event_ms, reply.event_ms);
  EXPECT_TRUE(decoded->late_work);
  EXPECT_EQ(decoded->last_set, 1);
  ASSERT_EQ(decoded->kernels.size(), 1u);
  EXPECT_EQ(decoded->kernels[0].name, "_Z6kernelv");
  EXPECT_EQ(decoded->kernels[0].stream_id, 7u);
  EXPECT_EQ(decoded->kernels[0].launch, reply.kernels[0].launch);
}

// A child that records no launch configuration (an older one) still gives a valid reply.
TEST(Protocol, AKernelWithoutItsLaunchConfigurationDecodesWithAnEmptyOne) {
  Reply reply;
  reply.last_set = 0; // a time reply
  reply.kernels = {{"_Z6kernelv", 7, 0.2, "grid 1x1x1"}};
  auto json = trace::Json::parse(encode(reply));
  json["time"]["kernels"][0].erase("launch");
  auto decoded = decode_reply(json.dump());
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_EQ(decoded->kernels.size(), 1u);
  EXPECT_EQ(decoded->kernels[0].launch, "");
}

TEST(Protocol, FailureReplyCarriesKindMessageAndCudaError) {
  Reply reply = Reply::failure(ChildError::cuda, "CUDA error after the call");
  reply.cuda_error = "cudaErrorIllegalAddress: an illegal memory access was encountered";
  reply.invoke_status = 700;
  auto decoded = decode_reply(encode(reply));
  ASSERT_TRUE(decoded);
  EXPECT_FALSE(decoded->ok);
  EXPECT_EQ(decoded->error, ChildError::cuda);
  EXPECT_EQ(decoded->invoke_status, 700);
  EXPECT_EQ(decoded->cuda_error, reply.cuda_error);
}

TEST(Protocol, CountsTravelTyped) {
  Reply reply;
  reply.counts = Counts{};
  reply.counts->available = true;
  reply.counts->metrics = {"smsp__sass_inst_executed_op_shared_gmma.sum"};
  reply.counts->totals = {9175040.0};
  auto decoded = decode_reply(encode(reply));
  ASSERT_TRUE(decoded);
  ASSERT_TRUE(decoded->counts);
  EXPECT_EQ(decoded->counts->total("smsp__sass_inst_executed_op_shared_gmma.sum"), 9175040.0);
  EXPECT_EQ(*decoded->counts, *reply.counts);
}

// A reply whose counts do not read is not this protocol's shape: bad_response, naming the path.
TEST(Protocol, AReplyWithMalformedCountsIsABadResponse) {
  Reply reply;
  reply.counts = Counts::unavailable("r");
  std::string line = encode(reply);
  const std::string counts = R"("counts":{"available":false,"reason":"r"})";
  ASSERT_NE(line.find(counts), std::string::npos) << line;
  line.replace(line.find(counts), counts.size(),
               R"("counts":{"available":true,"metrics":{"m":null}})");
  auto decoded = decode_reply(line);
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().kind, util::ErrorKind::bad_response);
  EXPECT_NE(decoded.error().message.find("$.counts: instruction counts: $.metrics.m"),
            std::string::npos)
      << decoded.error().message;
}

TEST(Protocol, NonFiniteNumbersTravelAsStringsAndComeBackAsThemselves) {
  // The JSON library writes a NaN as null, which the supervisor then could not read as a number
  // (the verdict issue: "type must be number, but is null").
  Reply reply;
  reply.last_set = 0;
  reply.latencies_ms = {0.5, std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity()};
  reply.counts = Counts{};
  reply.counts->available = true;
  reply.counts->metrics = {"gmma"};
  reply.counts->totals = {std::nan("")};
  const std::string line = encode(reply);
  EXPECT_EQ(line.find("null"), std::string::npos) << line;
  auto decoded = decode_reply(line);
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_EQ(decoded->latencies_ms.size(), 3u);
  EXPECT_TRUE(std::isnan(decoded->latencies_ms[1]));
  EXPECT_TRUE(std::isinf(decoded->latencies_ms[2]));
  constexpr auto kExact = util::NonFiniteSpelling::exact;
  EXPECT_TRUE(std::isnan(decoded->counts->totals.at(0)));
  EXPECT_FALSE(util::number_from_json(trace::Json(nullptr), kExact));
  EXPECT_FALSE(util::number_from_json(trace::Json("lots"), kExact));
}

TEST(Protocol, ACallReplyCarriesItsLatencyKernelsAndTheRefusedLookups) {
  Reply reply;
  reply.call_ms = 1.25;
  reply.kernels = {{"_Z4gemmv", 13, 1.2, ""}};
  reply.refused = {"cuModuleLoadData"};
  auto decoded = decode_reply(encode(reply));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->call_ms, 1.25);
  ASSERT_EQ(decoded->kernels.size(), 1u);
  EXPECT_EQ(decoded->kernels[0].name, "_Z4gemmv");
  EXPECT_EQ(decoded->refused, std::vector<std::string>{"cuModuleLoadData"});
  Reply timed;
  timed.last_set = 1;
  timed.kernel_sets = {{{"_Z4gemmv"}, 49}, {{}, 1}};
  auto sets = decode_reply(encode(timed));
  ASSERT_TRUE(sets);
  ASSERT_EQ(sets->kernel_sets.size(), 2u);
  EXPECT_EQ(sets->kernel_sets[1].calls, 1);
  EXPECT_TRUE(sets->kernel_sets[1].kernels.empty());
}

TEST(Protocol, EveryReplyCarriesTheModulesLoadedInTheChild) {
  Reply reply;
  reply.modules = {{"ab12", {"_Z4gemmv", "_Z4tailv"}}, {"cd34", {}}};
  auto decoded = decode_reply(encode(reply));
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_EQ(decoded->modules.size(), 2u);
  EXPECT_EQ(decoded->modules[0].sha256, "ab12");
  EXPECT_EQ(decoded->modules[0].functions, (std::vector<std::string>{"_Z4gemmv", "_Z4tailv"}));
  EXPECT_TRUE(decoded->modules[1].functions.empty());
  for (
      const char* line :
      {R"({"ok":true,"error":"none","message":"","invoke_status":0,"cuda_error":"","modules":[{"sha256":1,"functions":[]}]})",
       R"({"ok":true,"error":"none","message":"","invoke_status":0,"cuda_error":"","modules":[{"functions":[]}]})",
       R"({"ok":true,"error":"none","message":"","invoke_status":0,"cuda_error":"","modules":{}})"}) {
    auto bad = decode_reply(line);
    ASSERT_FALSE(bad) << line;
    EXPECT_EQ(bad.error().kind, util::ErrorKind::bad_response);
  }
}

TEST(Protocol, EveryReplyCarriesTheStreamOrderedFreesSoFar) {
  Reply reply;
  reply.stream_ordered_frees = 3;
  auto decoded = decode_reply(encode(reply));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->stream_ordered_frees, 3u);
  auto none = decode_reply(encode(Reply{}));
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(none->stream_ordered_frees, 0u);
  auto bad = decode_reply(
      R"({"ok":true,"error":"none","message":"","invoke_status":0,"cuda_error":"","stream_ordered_frees":-1})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("$.stream_ordered_frees"), std::string::npos)
      << bad.error().message;
}

TEST(Protocol, MalformedRepliesAreBadResponses) {
  for (
      const char* line :
      {"", "not json", "{}", R"({"ok":true})",
       R"({"ok":true,"error":"bogus","message":"","invoke_status":0,"cuda_error":""})",
       R"({"ok":"yes","error":"none","message":"","invoke_status":0,"cuda_error":""})",
       R"({"ok":true,"error":"none","message":"","invoke_status":0,"cuda_error":"","counts":null})",
       R"({"ok":true,"error":"none","message":"","invoke_status":0,"cuda_error":"","call":{"latency_ms":null,"kernels":[]}})"}) {
    auto decoded = decode_reply(line);
    ASSERT_FALSE(decoded) << line;
    EXPECT_EQ(decoded.error().kind, util::ErrorKind::bad_response);
  }
}

TEST(Protocol, UnknownRequestOpIsRejected) {
  EXPECT_FALSE(decode_request(R"({"op":"format_disk"})"));
}

TEST(Protocol, ChildErrorNamesAreStable) {
  EXPECT_EQ(to_string(ChildError::signature_mismatch), "signature_mismatch");
  EXPECT_EQ(to_string(ChildError::protocol), "protocol");
  EXPECT_EQ(to_string(RequestOp::count), "count");
  EXPECT_EQ(to_string(RequestOp::prepare), "prepare");
  EXPECT_EQ(to_string(RequestOp::end_session), "end_session");
  Request end;
  end.op = RequestOp::end_session;
  EXPECT_EQ(encode(end), R"({"op":"end_session","id":0})");
  EXPECT_EQ(decode_request(encode(end))->op, RequestOp::end_session);
}

constexpr std::string_view kReplyHead =
    R"({"ok":true,"error":"none","message":"","invoke_status":0,"cuda_error":"")";

// The error message decode_reply gives for a reply whose head is followed by `tail`.
std::string reply_error(const std::string& tail) {
  auto decoded = decode_reply(std::string(kReplyHead) + tail + "}");
  if (decoded)
    return "accepted";
  EXPECT_EQ(decoded.error().kind, util::ErrorKind::bad_response);
  return decoded.error().message;
}

std::string request_error(std::string_view line) {
  auto decoded = decode_request(line);
  if (decoded)
    return "accepted";
  EXPECT_EQ(decoded.error().kind, util::ErrorKind::bad_response);
  return decoded.error().message;
}

TEST(Protocol, AMistypedReplyFieldIsABadResponseNamingItsJsonPath) {
  EXPECT_EQ(decode_reply(R"({"ok":true,"error":"none","message":"","invoke_status":"0",)"
                         R"("cuda_error":""})")
                .error()
                .message,
            "malformed reply from the candidate process: $.invoke_status: expected an integer "
            "in [-2147483648, 2147483647], got string");
  EXPECT_EQ(reply_error(R"(,"time":{"latencies_ms":[],"event_ms":[],"late_work":false,)"
                        R"("last_set":0,"kernels":[],"kernel_sets":[{"kernels":["a"],)"
                        R"("calls":"3"}],"mode":"strict","strict_reason":""})"),
            "malformed reply from the candidate process: $.time.kernel_sets[0].calls: expected "
            "an integer in [-2147483648, 2147483647], got string");
}

TEST(Protocol, AnUnknownChildErrorOrTimingModeNamesTheAcceptedNames) {
  EXPECT_EQ(decode_reply(R"({"ok":false,"error":"bogus","message":"","invoke_status":0,)"
                         R"("cuda_error":""})")
                .error()
                .message,
            "malformed reply from the candidate process: $.error: expected one of \"none\", "
            "\"signature_mismatch\", \"dlopen\", \"ipc\", \"invoke\", \"cuda\", "
            "\"timer\", \"protocol\", got \"bogus\"");
  EXPECT_EQ(request_error(R"({"op":"time","warmup":1,"iterations":2,"first_call":0,)"
                          R"("mode":"sloppy"})"),
            "malformed request: $.mode: expected one of \"batched\", \"strict\", got "
            "\"sloppy\"");
}

TEST(Protocol, AnIntegerOutOfItsRangeIsRejectedNotTruncated) {
  EXPECT_EQ(reply_error(R"(,"call":{"latency_ms":1,"kernels":[{"name":"k","stream":4294967296,)"
                        R"("duration_ms":1}]})"),
            "malformed reply from the candidate process: $.call.kernels[0].stream: expected an "
            "integer in [0, 4294967295], got 4294967296");
  EXPECT_NE(request_error(R"({"op":"call","set":4294967296})").find("$.set: expected an integer"),
            std::string::npos);
}

TEST(Protocol, AFractionalOrBooleanSetIsRejectedNotRounded) {
  EXPECT_NE(request_error(R"({"op":"call","set":1.5})").find("$.set: expected an integer"),
            std::string::npos);
  EXPECT_NE(request_error(R"({"op":"count","set":true})").find("$.set: expected an integer"),
            std::string::npos);
  EXPECT_EQ(decode_request(R"({"op":"call","set":2.0})")->set, 2);
}

TEST(Protocol, ANegativeBufferSizeIsRejectedNamingTheBuffer) {
  EXPECT_EQ(request_error(R"({"op":"load","library":"k.so","signature":"s","sets":[[)"
                          R"({"ipc":"ab","bytes":64,"output":false},)"
                          R"({"ipc":"cd","bytes":-1,"output":true}]],"scalars":[],)"
                          R"("var_axes":[]})"),
            "malformed request: $.sets[0][1].bytes: expected a non-negative 64-bit integer, "
            "got -1");
  EXPECT_EQ(request_error(R"({"op":"load","library":"k.so","signature":"s","sets":[],)"
                          R"("scalars":["1"],"var_axes":[]})"),
            "malformed request: $.scalars[0]: expected a non-negative 64-bit integer, got "
            "string");
}

TEST(Protocol, AKernelListThatIsNotAnArrayIsRejected) {
  EXPECT_EQ(reply_error(R"(,"call":{"latency_ms":1,"kernels":null})"),
            "malformed reply from the candidate process: $.call.kernels: expected an array, "
            "got null");
  EXPECT_EQ(reply_error(R"(,"refused":"cuModuleLoadData")"),
            "malformed reply from the candidate process: $.refused: expected an array, got "
            "string");
}

TEST(Protocol, ALineThatIsNotAnObjectIsABadResponse) {
  EXPECT_EQ(decode_reply("not json").error().message,
            "malformed reply from the candidate process: not JSON");
  EXPECT_EQ(decode_reply("[1]").error().message,
            "malformed reply from the candidate process: $: expected an object, got array");
  EXPECT_EQ(request_error("{}"), "malformed request: $: missing required key \"op\"");
}

TEST(Protocol, KeysANewerPeerAddsAreIgnored) {
  auto request = decode_request(R"({"op":"ping","id":7,"deadline_ms":5})");
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->id, 7u);
  EXPECT_EQ(reply_error(R"(,"energy_j":1.5)"), "accepted");
}

} // namespace
} // namespace ptxbench::protocol
