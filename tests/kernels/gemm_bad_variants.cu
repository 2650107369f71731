// Deliberately wrong or misbehaving candidates for gemm_n7168_k5120 (C = A·Bᵀ, bf16), used by
// tests/unit/exec to prove each evaluator invariant. The test prepends
// `#define PTXBENCH_VARIANT <n>` to pick one; with no define this is a correct SIMT GEMM.
//   1 transpose      reads B as [K, N] instead of [N, K]                 → INCORRECT_NUMERICAL
//   2 no_write       launches nothing                                    → INCORRECT_NUMERICAL
//   3 first_set      computes once, then replays a cached C             → INCORRECT_NUMERICAL
//   4 illegal        writes through a wild pointer                       → RUNTIME_ERROR
//   5 trap           __trap()                                            → RUNTIME_ERROR
//   6 hang           spins forever                                       → TIMEOUT
//   7 exit           exit(0) inside run                                  → RUNTIME_ERROR
//   8 side_stream    computes on its own stream, synchronised in run    → PASSED (time charged)
//   9 late_work      computes on its own stream, returns at once         → RUNTIME_ERROR (timing)
//  10 mutate_input   computes correctly, then overwrites A[0]            → INCORRECT_NUMERICAL
//  11 oob_tail       only writes one element past the end of C          → RUNTIME_ERROR under
//                    --sanitize, memcheck naming the line (no GEMM: memcheck stays fast);
//                    without it, whatever the memory after C allows
//  12 skip_repeat    computes, but returns at once when called again on the same A (the same
//                    values: every call gets the same pointers, the evaluator's call slot)
//                    (the counting pass used to read NaN counters and crash the evaluator)
//                                                                        → INCORRECT_NUMERICAL
//  13 replay_copy    computes on the first sight of each A, then copies the cached C
//                    (cudaMemcpyAsync, no kernel)                        → RUNTIME_ERROR (rule)
//  14 replay_kernel  as 13, but the GEMM kernel itself does the copy (same kernel, other work);
//                    only the repeat finds its input again (timed calls get fresh inputs) and
//                    is far faster than the first sight               → RUNTIME_ERROR (rule)
//  17 bf16_acc       accumulates in bf16 instead of fp32 (precision downcast) → INCORRECT_NUMERICAL
//  18 drift          correct for its first 8 calls (correctness, repeat, counting pass), then
//                    reads B transposed: only the timed calls' checks see it
//                                                                        → INCORRECT_NUMERICAL
//  19 skip_unchecked correct on its first 20 calls and its last ones, but from call 21 to 149
//                    computes 60 % of C's rows (above the 50 % first-sight rule): with the
//                    paper's protocol only the timed calls' checks see it → INCORRECT_NUMERICAL
//  20 precompute_all in its first call finds every allocation the size of A or B in the
//                    process (cuMemGetAddressRange over its address space) and computes C for
//                    each pair; later calls replay the cached C of their (A, B) with the GEMM
//                    kernel. Every call gets the call slot, so only one pair exists, and the
//                    second set's call replays the first set's C     → INCORRECT_NUMERICAL
//  26 replay_idle    as 14, but the replay also idles to 60 % of the kernel's first-sight time
//                    (one block spins), above the 50 % first-sight rule: with the input sets
//                    rotated over the timed calls it PASSED at 0.6 of its honest latency; every
//                    timed call now gets fresh inputs, so it computes each one → PASSED, its
//                    latency that of computing
//  28 unmap_slot    computes C, then takes the call slot out of its own address space
//                    (cuMemUnmap of each buffer's range, or cudaIpcCloseMemHandle where the slot
//                    came by CUDA IPC): its next call faults. The supervisor, which owns the
//                    memory, still reads the first call's C and the inputs, and evaluates the
//                    next candidate on the same memory                 → RUNTIME_ERROR
// Reaching code that is not the candidate's at run time, without a word the source gate reads:
//  15 cublas_dlopen  dlopen/dlsym under asm labels; cublasGemmEx computes C → the import rule
//                    rejects kernel.so (COMPILE_ERROR, banned library); with the import rule
//                    off, the child may not read cuBLAS's file, so C stays unwritten
//                    → INCORRECT_NUMERICAL; on a kernel without Landlock, cuBLAS's kernel in
//                    the call fails it                                     → RUNTIME_ERROR (rule)
//  21 impostor_module computes C with its own kernel and, in every call, also launches a kernel
//                    named like one of its own (`ptxbench_touch`) from a module it loads with
//                    cuModuleLoadData, found without an import or a lookup: by reading libcuda's
//                    symbol table in memory from the address of cuLaunchKernel. The name rule
//                    sees only candidate names; the module's identity is not the candidate's
//                                                                        → RUNTIME_ERROR (rule)
//  22 host_time      computes C, then spends 100 ms on the host inside every call: a call whose
//                    reported latency is far below its wall time, as a child whose timer was
//                    forged would report (and as host-side computation would, which the timer
//                    does not charge)                                  → RUNTIME_ERROR (timing)
//  23 raw_syscall    computes C, then writes a file (/tmp/ptxbench_variant_23) with an inline
//                    `syscall` instruction: no import, no libc → the child's system-call filter
//                    refuses it and the file is never made              → RUNTIME_ERROR (filter)
//  24 ctor_syscall   as 23, from a static constructor (run inside dlopen, before any call)
//                                                                        → RUNTIME_ERROR (filter)
//  25 read_supervisor opens /proc/<parent>/mem read-only with an inline `syscall` (the filter
//                    allows read-only opens): the kernel refuses it, because the child dropped
//                    CAP_SYS_PTRACE and the supervisor is not dumpable; it then computes C
//                    (had the open worked, it would leave C unwritten)  → PASSED
//  27 read_library  opens a vendor kernel library's file (PTXBENCH_LIBRARY_FILE, cuBLASLt, put
//                    in by the test) read-only with an inline `syscall`, as a first step to
//                    loading its kernels with CUPTI turned off; the child may not read it
//                    (exec/child_reads.hpp), so it computes C (had the open worked, it would
//                    leave C unwritten)                                  → PASSED
//  16 module_by_name asks cudaGetDriverEntryPointByVersion for cuModuleLoadData (the name
//                    put together at run time), launches the loaded kernel, computes C with
//                    its own kernel → the candidate process refuses the lookup
//                                                                        → RUNTIME_ERROR (rule)
//                                                                        → RUNTIME_ERROR (rule)
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#if PTXBENCH_VARIANT == 15
// The loader under other names: no identifier the gate bans, the same imports in the binary.
extern "C" void* open_library(const char* file, int mode) __asm__("dl"
                                                                  "open");
extern "C" void* find_symbol(void* handle, const char* name) __asm__("dl"
                                                                     "sym");
#endif
#if PTXBENCH_VARIANT == 16 || PTXBENCH_VARIANT == 20 || PTXBENCH_VARIANT == 21 ||             \
    PTXBENCH_VARIANT == 28
#include <cuda.h>
#endif
#if PTXBENCH_VARIANT == 21
#include <elf.h>
#endif
#if PTXBENCH_VARIANT == 22
#include <chrono>
#endif
#if PTXBENCH_VARIANT == 20
#include <cstdio>
#include <vector>
#endif
#if PTXBENCH_VARIANT == 25
#include <cstdio>
#include <unistd.h>
#endif
#if PTXBENCH_VARIANT == 15 || PTXBENCH_VARIANT == 27 || PTXBENCH_VARIANT == 28
#include <cstdio>
#endif

#ifndef PTXBENCH_VARIANT
#define PTXBENCH_VARIANT 0
#endif

namespace {

constexpr int kN = 7168;
constexpr int kK = 5120;
constexpr int kTile = 64;
constexpr int kStep = 16;
constexpr int kThreads = 256;
static_assert(kN % kTile == 0 && kK % kStep == 0, "tile divisibility");
static_assert(kTile * kStep == 4 * kThreads, "each thread stages 4 elements per operand");

// 64x64 tile of C per CTA; thread (ty, tx) owns rows 4ty.. and columns 4tx.. of the tile.
// With `b_is_kn` the B operand is indexed as [K, N] (the transpose bug). With `replay` the
// kernel only copies that cached C into C (variant 14: the same kernel, other work), and its
// first block then spins for `idle_cycles` (variant 26).
__global__ void __launch_bounds__(kThreads)
    tiled_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
               bool b_is_kn, const __nv_bfloat16* replay, long long idle_cycles) {
  if (replay != nullptr) {
    const int64_t total = int64_t(M) * kN;
    const int64_t stride = int64_t(gridDim.x) * gridDim.y * kThreads;
    for (int64_t i = (int64_t(blockIdx.y) * gridDim.x + blockIdx.x) * kThreads + threadIdx.x;
         i < total; i += stride)
      C[i] = replay[i];
    if (idle_cycles > 0 && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0)
      for (const long long start = clock64(); clock64() - start < idle_cycles;) {
      }
    return;
  }
  __shared__ float a_tile[kStep][kTile + 4];
  __shared__ float b_tile[kStep][kTile + 4];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * kTile, n0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < kK; k0 += kStep) {
    for (int i = 0; i < 4; ++i) {
      const int idx = threadIdx.x + i * kThreads, row = idx / kStep, k = idx % kStep;
      a_tile[k][row] = m0 + row < M ? __bfloat162float(A[int64_t(m0 + row) * kK + k0 + k]) : 0.f;
      const int64_t b_index =
          b_is_kn ? int64_t(k0 + k) * kN + n0 + row : int64_t(n0 + row) * kK + k0 + k;
      b_tile[k][row] = __bfloat162float(B[b_index]); // in bounds either way: K*N elements
    }
    __syncthreads();
    for (int k = 0; k < kStep; ++k)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          acc[i][j] += a_tile[k][4 * ty + i] * b_tile[k][4 * tx + j];
#if PTXBENCH_VARIANT == 17
          acc[i][j] = __bfloat162float(__float2bfloat16_rn(acc[i][j])); // a bf16 accumulator
#endif
        }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const int row = m0 + 4 * ty + i;
    if (row >= M)
      continue;
    for (int j = 0; j < 4; ++j)
      C[int64_t(row) * kN + n0 + 4 * tx + j] = __float2bfloat16_rn(acc[i][j]);
  }
}

__global__ void wild_write() {
  *reinterpret_cast<volatile int*>(uintptr_t(0x10)) = 1;
}
__global__ void trap_kernel() {
  __trap();
}
__global__ void spin_kernel(volatile int* never) {
  while (*never == 0) {
  }
}
__global__ void poke_input(__nv_bfloat16* a) {
  a[0] = __float2bfloat16_rn(12345.0f);
}
__global__ void tail_write(__nv_bfloat16* c, int64_t elements) {
  c[elements] = __float2bfloat16_rn(1.0f); // out of bounds: one past the end of C
}

void launch(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
            cudaStream_t stream, bool b_is_kn = false, const __nv_bfloat16* replay = nullptr,
            long long idle_cycles = 0) {
  const dim3 grid(kN / kTile, unsigned((M + kTile - 1) / kTile));
  tiled_gemm<<<grid, kThreads, 0, stream>>>(A, B, C, int(M), b_is_kn, replay, idle_cycles);
}

// A fingerprint of A's values (32 bytes from its middle): the input set a call got, since every
// call gets the same pointers.
uint64_t fingerprint(const __nv_bfloat16* A, int64_t M, cudaStream_t stream) {
  uint64_t words[4] = {};
  cudaMemcpyAsync(words, A + M * kK / 2, sizeof words, cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  return words[0] ^ (words[1] * 3) ^ (words[2] * 5) ^ (words[3] * 7);
}

#if PTXBENCH_VARIANT == 26
float first_sight_ms = 0.0f;

// The GEMM on its first sight of an input, timed by events around it.
float timed_launch_ms(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
                      cudaStream_t stream) {
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  launch(A, B, C, M, stream);
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

// The SM clock cycles of `ms` milliseconds at the device's clock rate.
long long idle_cycles(double ms) {
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  return static_cast<long long>(ms * khz);
}
#endif

cudaStream_t side_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  }();
  return stream;
}

#if PTXBENCH_VARIANT == 15
// C = A·Bᵀ by the vendor library, reached through the loader. Column-major view: Cᵀ[N×M] =
// op(B as K×N, transposed)·(A as K×M), leading dimensions K, K and N.
bool library_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
                  cudaStream_t stream) {
  using Create = int (*)(void**);
  using SetStream = int (*)(void*, cudaStream_t);
  using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int,
                         const void*, int, int, const void*, void*, int, int, int, int);
  static void* handle = nullptr;
  static GemmEx gemm = nullptr;
  static SetStream set_stream = nullptr;
  if (gemm == nullptr) {
    void* lib = nullptr;
    for (const char* path : {"libcu"
                             "blas.so.13",
                             "/usr/local/cuda/lib64/libcu"
                             "blas.so.13",
                             "libcu"
                             "blas.so"})
      if (lib == nullptr)
        lib = open_library(path, 2 /* RTLD_NOW */);
    if (lib == nullptr) {
      std::fprintf(stderr, "library_gemm: the library could not be loaded\n");
      return false;
    }
    auto create = reinterpret_cast<Create>(find_symbol(lib, "cu"
                                                            "blasCreate_v2"));
    set_stream = reinterpret_cast<SetStream>(find_symbol(lib, "cu"
                                                              "blasSetStream_v2"));
    gemm = reinterpret_cast<GemmEx>(find_symbol(lib, "cu"
                                                     "blasGemmEx"));
    if (create == nullptr || set_stream == nullptr || gemm == nullptr || create(&handle) != 0) {
      gemm = nullptr;
      return false;
    }
  }
  const float one = 1.0f, zero = 0.0f;
  constexpr int kBf16 = 14, kCompute32F = 68, kDefaultAlgo = -1, kOpN = 0, kOpT = 1;
  return set_stream(handle, stream) == 0 &&
         gemm(handle, kOpT, kOpN, kN, int(M), kK, &one, B, kBf16, kK, A, kBf16, kK, &zero, C, kBf16,
              kN, kCompute32F, kDefaultAlgo) == 0;
}
#endif

#if PTXBENCH_VARIANT == 16
// A kernel from a module loaded by name at run time (a one-thread kernel that does nothing).
void launch_loaded_module(cudaStream_t stream) {
  char load_name[32] = "cuModule";
  std::strcat(load_name, "LoadData");
  char get_name[32] = "cuModule";
  std::strcat(get_name, "GetFunction");
  void* load = nullptr;
  void* get = nullptr;
  cudaDriverEntryPointQueryResult found{};
  cudaGetDriverEntryPointByVersion(load_name, &load, 12000, cudaEnableDefault, &found);
  cudaGetDriverEntryPointByVersion(get_name, &get, 12000, cudaEnableDefault, &found);
  if (load == nullptr || get == nullptr)
    return;
  static const char kPtx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                             ".visible .entry touch()\n{\n  ret;\n}\n";
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  if (reinterpret_cast<CUresult (*)(CUmodule*, const void*)>(load)(&module, kPtx) != CUDA_SUCCESS)
    return;
  if (reinterpret_cast<CUresult (*)(CUfunction*, CUmodule, const char*)>(get)(
          &function, module, "touch") != CUDA_SUCCESS)
    return;
  cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr);
}
#endif

#if PTXBENCH_VARIANT == 28
// Unmaps the allocation each of `pointers` lies in from this process (variant 28).
void unmap_slot(const void* const* pointers, unsigned count) {
  void* range = nullptr;
  void* unmap = nullptr;
  cudaDriverEntryPointQueryResult found{};
  cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &range, 12000, cudaEnableDefault,
                                   &found);
  cudaGetDriverEntryPointByVersion("cuMemUnmap", &unmap, 12000, cudaEnableDefault, &found);
  using RangeFn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  using UnmapFn = CUresult (*)(CUdeviceptr, size_t);
  for (unsigned i = 0; i < count; ++i) {
    CUdeviceptr base = 0;
    size_t size = 0;
    const auto at = reinterpret_cast<CUdeviceptr>(pointers[i]);
    if (range != nullptr && unmap != nullptr &&
        reinterpret_cast<RangeFn>(range)(&base, &size, at) == CUDA_SUCCESS &&
        reinterpret_cast<UnmapFn>(unmap)(base, size) == CUDA_SUCCESS)
      continue;
    cudaIpcCloseMemHandle(const_cast<void*>(pointers[i])); // the slot came by CUDA IPC
  }
  std::fprintf(stderr, "unmap_slot: %u buffers unmapped\n", count);
}
#endif

#if PTXBENCH_VARIANT == 21
// A libcuda function by name, read from the library's dynamic symbol table in memory: its ELF
// header is found by walking back page by page from a function it exports (cuLaunchKernel, an
// allowed import), so the binary imports no loader and asks for no entry point.
void* libcuda_symbol(const char* wanted) {
  auto page = reinterpret_cast<uintptr_t>(&cuLaunchKernel) & ~uintptr_t(4095);
  while (std::memcmp(reinterpret_cast<const void*>(page), ELFMAG, SELFMAG) != 0)
    page -= 4096;
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(page);
  const auto* phdrs = reinterpret_cast<const Elf64_Phdr*>(page + header->e_phoff);
  const Elf64_Dyn* dynamic = nullptr;
  for (int i = 0; i < header->e_phnum; ++i)
    if (phdrs[i].p_type == PT_DYNAMIC)
      dynamic = reinterpret_cast<const Elf64_Dyn*>(page + phdrs[i].p_vaddr);
  if (dynamic == nullptr)
    return nullptr;
  uintptr_t symtab = 0, strtab = 0;
  size_t strsz = 0;
  for (const Elf64_Dyn* d = dynamic; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB)
      symtab = d->d_un.d_ptr;
    if (d->d_tag == DT_STRTAB)
      strtab = d->d_un.d_ptr;
    if (d->d_tag == DT_STRSZ)
      strsz = d->d_un.d_val;
  }
  if (symtab < page) // relocated in place by the loader, or still relative
    symtab += page;
  if (strtab < page)
    strtab += page;
  const char* names = reinterpret_cast<const char*>(strtab);
  for (const auto* sym = reinterpret_cast<const Elf64_Sym*>(symtab) + 1;
       reinterpret_cast<uintptr_t>(sym) < strtab && sym->st_name < strsz; ++sym)
    if (sym->st_value != 0 && std::strcmp(names + sym->st_name, wanted) == 0)
      return reinterpret_cast<void*>(page + sym->st_value);
  return nullptr;
}

// The impostor: a module holding `ptxbench_touch`, loaded once, launched on every call.
void launch_impostor(cudaStream_t stream) {
  static CUfunction function = nullptr;
  if (function == nullptr) {
    auto load =
        reinterpret_cast<CUresult (*)(CUmodule*, const void*)>(libcuda_symbol("cuModuleLoadData"));
    auto get = reinterpret_cast<CUresult (*)(CUfunction*, CUmodule, const char*)>(
        libcuda_symbol("cuModuleGetFunction"));
    if (load == nullptr || get == nullptr)
      return;
    static const char kPtx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                               ".visible .entry ptxbench_touch()\n{\n  ret;\n}\n";
    CUmodule module = nullptr;
    if (load(&module, kPtx) != CUDA_SUCCESS ||
        get(&function, module, "ptxbench_touch") != CUDA_SUCCESS)
      return;
  }
  cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr);
}
#endif

#if PTXBENCH_VARIANT == 23 || PTXBENCH_VARIANT == 24 || PTXBENCH_VARIANT == 25 ||             \
    PTXBENCH_VARIANT == 27
// openat(AT_FDCWD, path, flags, 0644) as an x86_64 `syscall` instruction.
long open_raw(const char* path, long flags) {
  long result;
  register long mode asm("r10") = 0644;
  asm volatile("syscall"
               : "=a"(result)
               : "a"(257L), "D"(-100L), "S"(path), "d"(flags), "r"(mode)
               : "rcx", "r11", "memory");
  return result;
}
long write_file_raw(const char* path) { return open_raw(path, 01L | 0100L); } // O_WRONLY|O_CREAT
#endif
#if PTXBENCH_VARIANT == 24
[[maybe_unused]] long g_written_at_load = write_file_raw("/tmp/ptxbench_variant_24");
#endif

} // namespace

#if PTXBENCH_VARIANT == 21
// The candidate's own kernel of that name, so the name alone is the candidate's.
extern "C" __global__ void ptxbench_touch() {}
#endif

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {
  if (M <= 0)
    return;
#if PTXBENCH_VARIANT == 1
  launch(A, B, C, M, stream, true);
#elif PTXBENCH_VARIANT == 2
  (void)A, (void)B, (void)C, (void)stream;
#elif PTXBENCH_VARIANT == 3
  static __nv_bfloat16* cache = nullptr;
  const size_t bytes = size_t(M) * kN * sizeof(__nv_bfloat16);
  if (cache == nullptr) {
    cudaMalloc(&cache, bytes);
    launch(A, B, C, M, stream);
    cudaMemcpyAsync(cache, C, bytes, cudaMemcpyDeviceToDevice, stream);
  } else {
    cudaMemcpyAsync(C, cache, bytes, cudaMemcpyDeviceToDevice, stream);
  }
#elif PTXBENCH_VARIANT == 4
  (void)A, (void)B, (void)C;
  wild_write<<<1, 1, 0, stream>>>();
#elif PTXBENCH_VARIANT == 5
  (void)A, (void)B, (void)C;
  trap_kernel<<<1, 1, 0, stream>>>();
#elif PTXBENCH_VARIANT == 6
  static int* zero = nullptr;
  if (zero == nullptr) {
    cudaMalloc(&zero, sizeof(int));
    cudaMemset(zero, 0, sizeof(int));
  }
  (void)A, (void)B, (void)C;
  spin_kernel<<<1, 1, 0, stream>>>(zero);
#elif PTXBENCH_VARIANT == 7
  (void)A, (void)B, (void)C, (void)stream;
  std::exit(0);
#elif PTXBENCH_VARIANT == 8
  (void)stream;
  launch(A, B, C, M, side_stream());
  cudaStreamSynchronize(side_stream());
#elif PTXBENCH_VARIANT == 9
  (void)stream;
  launch(A, B, C, M, side_stream());
#elif PTXBENCH_VARIANT == 10
  launch(A, B, C, M, stream);
  poke_input<<<1, 1, 0, stream>>>(const_cast<__nv_bfloat16*>(A));
#elif PTXBENCH_VARIANT == 11
  (void)A, (void)B;
  tail_write<<<1, 1, 0, stream>>>(C, M * kN);
#elif PTXBENCH_VARIANT == 12
  static uint64_t last = 0;
  const uint64_t seen = fingerprint(A, M, stream);
  if (seen == last)
    return;
  last = seen;
  launch(A, B, C, M, stream);
#elif PTXBENCH_VARIANT == 13 || PTXBENCH_VARIANT == 14 || PTXBENCH_VARIANT == 26
  // One cached C per input A (the evaluator's input sets), made on first sight.
  struct Cached {
    uint64_t a;
    __nv_bfloat16* c;
  };
  static Cached cached[8] = {};
  const size_t bytes = size_t(M) * kN * sizeof(__nv_bfloat16);
  const uint64_t seen = fingerprint(A, M, stream);
  Cached* hit = nullptr;
  for (Cached& slot : cached)
    if (slot.c != nullptr && slot.a == seen)
      hit = &slot;
  if (hit == nullptr) {
    for (Cached& slot : cached)
      if (slot.c == nullptr && hit == nullptr)
        hit = &slot;
    if (hit == nullptr)
      hit = &cached[0];
    if (hit->c == nullptr)
      cudaMalloc(&hit->c, bytes);
    hit->a = seen;
#if PTXBENCH_VARIANT == 26
    first_sight_ms = std::max(first_sight_ms, timed_launch_ms(A, B, C, M, stream));
#else
    launch(A, B, C, M, stream);
#endif
    cudaMemcpyAsync(hit->c, C, bytes, cudaMemcpyDeviceToDevice, stream);
    return;
  }
#if PTXBENCH_VARIANT == 13
  cudaMemcpyAsync(C, hit->c, bytes, cudaMemcpyDeviceToDevice, stream);
#elif PTXBENCH_VARIANT == 26
  launch(A, B, C, M, stream, false, hit->c, idle_cycles(0.6 * first_sight_ms));
#else
  launch(A, B, C, M, stream, false, hit->c);
#endif
#elif PTXBENCH_VARIANT == 18
  static int calls = 0;
  launch(A, B, C, M, stream, ++calls > 8);
#elif PTXBENCH_VARIANT == 19
  static int calls = 0;
  ++calls;
  launch(A, B, C, calls > 20 && calls < 150 ? M * 6 / 10 : M, stream);
#elif PTXBENCH_VARIANT == 20
  struct Pair {
    const void* a;
    const void* b;
    __nv_bfloat16* c;
  };
  static std::vector<Pair> pairs;
  static bool searched = false;
  const size_t c_bytes = size_t(M) * kN * sizeof(__nv_bfloat16);
  if (!searched) {
    searched = true;
    const auto a_bytes = size_t(M) * kK * sizeof(__nv_bfloat16);
    const auto b_bytes = size_t(kN) * kK * sizeof(__nv_bfloat16);
    std::vector<CUdeviceptr> as, bs;
    constexpr int64_t kGranule = int64_t(2) << 20;              // the VA granularity
    constexpr int64_t kReach = (int64_t(256) << 30) / kGranule; // 256 GiB either side of A
    const auto origin = static_cast<int64_t>(reinterpret_cast<uintptr_t>(A)) / kGranule * kGranule;
    for (int64_t k = -kReach; k <= kReach; ++k) {
      CUdeviceptr base = 0;
      size_t size = 0;
      const int64_t probe = origin + k * kGranule;
      if (probe <= 0 || cuMemGetAddressRange(&base, &size, CUdeviceptr(probe)) != CUDA_SUCCESS)
        continue;
      if (CUdeviceptr(probe) != base)
        continue; // count each allocation once, at its start
      if (size == a_bytes)
        as.push_back(base);
      if (size == b_bytes)
        bs.push_back(base);
    }
    std::fprintf(stderr, "precompute_all: %zu allocations the size of A, %zu the size of B\n",
                 as.size(), bs.size());
    for (CUdeviceptr a : as)
      for (CUdeviceptr b : bs) {
        Pair pair{reinterpret_cast<const void*>(a), reinterpret_cast<const void*>(b), nullptr};
        cudaMalloc(&pair.c, c_bytes);
        launch(reinterpret_cast<const __nv_bfloat16*>(a), reinterpret_cast<const __nv_bfloat16*>(b),
               pair.c, M, stream);
        pairs.push_back(pair);
      }
  }
  for (const Pair& pair : pairs)
    if (pair.a == A && pair.b == B) {
      launch(A, B, C, M, stream, false, pair.c);
      return;
    }
  launch(A, B, C, M, stream);
#elif PTXBENCH_VARIANT == 21
  launch(A, B, C, M, stream);
  launch_impostor(stream);
#elif PTXBENCH_VARIANT == 22
  launch(A, B, C, M, stream);
  cudaStreamSynchronize(stream);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (std::chrono::steady_clock::now() < until) {
  }
#elif PTXBENCH_VARIANT == 23
  launch(A, B, C, M, stream);
  (void)write_file_raw("/tmp/ptxbench_variant_23");
#elif PTXBENCH_VARIANT == 25
  static bool tried = false;
  if (!tried) {
    tried = true;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/mem", static_cast<int>(getppid()));
    if (open_raw(path, 0) >= 0) { // O_RDONLY: the secret seed and check pattern are in there
      std::fprintf(stderr, "supervisor_memory: %s is open\n", path);
      return; // C stays unwritten: the test sees the open as a wrong answer
    }
  }
  launch(A, B, C, M, stream);
#elif PTXBENCH_VARIANT == 27
  static bool tried = false;
  if (!tried) {
    tried = true;
    if (open_raw(PTXBENCH_LIBRARY_FILE, 0) >= 0) { // O_RDONLY
      std::fprintf(stderr, "library_file: %s is open\n", PTXBENCH_LIBRARY_FILE);
      return; // C stays unwritten: the test sees the open as a wrong answer
    }
  }
  launch(A, B, C, M, stream);
#elif PTXBENCH_VARIANT == 28
  launch(A, B, C, M, stream);
  cudaStreamSynchronize(stream);
  static bool unmapped = false;
  if (!unmapped) {
    unmapped = true;
    const void* const slot[] = {A, B, C};
    unmap_slot(slot, 3);
  }
#elif PTXBENCH_VARIANT == 15
  (void)library_gemm(A, B, C, M, stream); // no fallback: without cuBLAS, C stays unwritten
#elif PTXBENCH_VARIANT == 16
  launch_loaded_module(stream);
  launch(A, B, C, M, stream);
#else
  launch(A, B, C, M, stream);
#endif
}
