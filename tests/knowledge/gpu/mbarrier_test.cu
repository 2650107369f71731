// mbarrier phases: a fresh barrier reports its "preceding" phase (parity 1) complete; a phase
// completes only after all arrivals; parity waits flip with each phase; a phase with
// expect_tx completes only once the bulk copy's bytes arrived (checked through the data), both
// with arrive.expect_tx and with a separate expect_tx.
#include "harness.cuh"
#include "knowledge/sm90a/ptx.cuh"

namespace {

constexpr uint32_t kBytes = 4096;
constexpr int kProbes = 10;

__global__ void __launch_bounds__(96, 1)
    phase_kernel(const uint4* src, uint4* copied, uint32_t* probe) {
  __shared__ __align__(128) uint4 buf[2][kBytes / 16];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = sm90::smem_u32(&bar);
  const uint32_t t = threadIdx.x;
  if (t == 0) {
    sm90::mbar_init(b, 2);
    sm90::fence_mbarrier_init_release_cluster();
  }
  __syncthreads();
  if (t == 0) {
    probe[0] = sm90::mbar_test_wait(b, 1);
    probe[1] = sm90::mbar_test_wait(b, 0);
  }
  __syncthreads();
  if (t == 32)
    sm90::mbar_arrive(b);
  __syncthreads();
  if (t == 0)
    probe[2] = sm90::mbar_test_wait(b, 0);
  __syncthreads();
  if (t == 64)
    sm90::mbar_arrive(b);
  __syncthreads();
  if (t == 0) {
    probe[3] = sm90::mbar_test_wait(b, 0);
    probe[4] = sm90::mbar_test_wait(b, 1);
  }
  __syncthreads();
  if (t == 0) {
    sm90::mbar_arrive_expect_tx(b, kBytes);
    sm90::bulk_copy_g2s(sm90::smem_u32(buf[0]), src, kBytes, b);
  }
  if (t == 32)
    sm90::mbar_arrive(b);
  kp::wait_or_trap(b, 1);
  __syncthreads();
  if (t == 0) {
    probe[5] = 1;
    probe[6] = sm90::mbar_test_wait(b, 0);
    probe[7] = sm90::mbar_test_wait(b, 1);
    sm90::mbar_expect_tx(b, kBytes);
    sm90::bulk_copy_g2s(sm90::smem_u32(buf[1]), src + kBytes / 16, kBytes, b);
    sm90::mbar_arrive(b);
  }
  if (t == 64)
    sm90::mbar_arrive(b);
  kp::wait_or_trap(b, 0);
  __syncthreads();
  if (t == 0) {
    probe[8] = sm90::mbar_test_wait(b, 0);
    probe[9] = sm90::mbar_test_wait(b, 1);
    sm90::mbar_inval(b);
  }
  for (uint32_t i = t; i < 2 * kBytes / 16; i += 96)
    copied[i] = buf[i / (kBytes / 16)][i % (kBytes / 16)];
}

std::string phase_case() {
  std::vector<uint4> host(2 * kBytes / 16);
  for (uint32_t i = 0; i < host.size(); ++i)
    host[i] = make_uint4(i, i + 1, i * 3u, ~i);
  kp::DeviceBuffer<uint4> src(host.size()), copied(host.size());
  kp::DeviceBuffer<uint32_t> probe(kProbes);
  src.upload(host);
  phase_kernel<<<1, 96>>>(src.get(), copied.get(), probe.get());
  if (std::string e = kp::sync_kernel("phase_kernel"); !e.empty())
    return e;
  const std::vector<uint32_t> got = probe.download();
  const uint32_t want[kProbes] = {1, 0, 0, 1, 0, 1, 0, 1, 1, 0};
  const char* what[kProbes] = {"fresh: parity 1 complete",
                               "fresh: parity 0 incomplete",
                               "1 of 2 arrivals: phase 0 incomplete",
                               "phase 0 complete",
                               "phase 1 incomplete",
                               "phase 1 (tx) waited",
                               "phase 2 incomplete",
                               "phase 1 complete",
                               "phase 2 (expect_tx) complete",
                               "phase 3 incomplete"};
  for (int i = 0; i < kProbes; ++i)
    if (got[i] != want[i])
      return std::string("probe ") + std::to_string(i) + " (" + what[i] +
             ") = " + std::to_string(got[i]);
  const std::vector<uint4> data = copied.download();
  if (std::memcmp(data.data(), host.data(), 2 * kBytes) != 0)
    return "bytes seen after the tx phases differ from the source";
  return {};
}

const kp::Register reg_phase("mbarrier_phase_parity_tx", &phase_case);

} // namespace
