"""One GPU run of the Triton child prototype (docs/evaluation.md, "Triton candidates"): the
harness's part is played by this script (buffers from torch, a PtxbenchCall record, a side
stream), the candidate is called through ptxbench_triton.child's C callback, and the script
logs what the C++ child would see: JIT time outside the timed window, the kernels CUPTI saw
(through torch.profiler, which records CUPTI activity), the cubins in the per-evaluation
TRITON_CACHE_DIR with their SASS tensor-path opcodes, and a foreign kernel for a torch.matmul
candidate. Usage: python3 python/tools/gpu_probe.py KERNEL.py FOREIGN.py OUT.json"""

import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time

cache = tempfile.mkdtemp(prefix="ptxbench-triton-cache-")
os.environ["TRITON_CACHE_DIR"] = cache
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import triton  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from ptxbench_triton import child  # noqa: E402

N, K = 7168, 5120


def binding_of(m):
    """The binding exec/triton_binding.hpp writes for gemm_n7168_k5120 at M = m."""
    shapes = [[m, K], [N, K], [m, N]]
    args = [{"kind": "tensor", "index": i, "shape": s, "dtype": "bfloat16"}
            for i, s in enumerate(shapes)] + [{"kind": "axis", "index": 0}]
    return {"params": ["A", "B", "C", "M"], "args": args}


def make_call(bufs, m, stream):
    pointers = (ctypes.c_void_p * 3)(*[t.data_ptr() for t in bufs])
    axes = (ctypes.c_int64 * 1)(m)
    call = child.PtxbenchCall(version=1, num_buffers=3, num_scalars=0, num_var_axes=1,
                              buffers=ctypes.cast(pointers, ctypes.POINTER(ctypes.c_void_p)),
                              var_axes=ctypes.cast(axes, ctypes.POINTER(ctypes.c_int64)),
                              stream=stream.cuda_stream)
    return call, (pointers, axes)


def kernels_seen(fn):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})


def sass_families(cubin):
    text = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True).stdout
    ops = {}
    for family, pattern in [("HGMMA", r"\bHGMMA\."), ("UTMALDG", r"\bUTMALDG\b"),
                            ("UTMASTG", r"\bUTMASTG\b"), ("HMMA", r"\bHMMA\.")]:
        ops[family] = len(re.findall(pattern, text))
    return ops


def probe(path, m, log):
    run = child.load_candidate(path, ["A", "B", "C", "M"])
    binding = child.Binding(run, binding_of(m))
    invoke = child.INVOKE_FN(lambda call: binding.invoke(call, torch))
    gen = torch.Generator(device="cuda").manual_seed(7)
    A = torch.randn(m, K, device="cuda", dtype=torch.bfloat16, generator=gen)
    B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16, generator=gen) * 0.05
    C = torch.full((m, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    stream = torch.cuda.Stream()
    call, keep = make_call([A, B, C], m, stream)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    status = invoke(ctypes.pointer(call))
    jit_ms = (time.perf_counter() - t0) * 1e3
    torch.cuda.synchronize()
    log["jit_status"], log["jit_ms"] = status, round(jit_ms, 1)
    if status != 0:
        log["error"] = binding.last_error
        return
    C.fill_(float("nan"))
    seen = kernels_seen(lambda: invoke(ctypes.pointer(call)))
    ref = (A.float() @ B.float().T)
    err = (C.float() - ref).abs()
    log["kernels_seen_by_cupti"] = seen
    log["max_abs_err"] = float(err.max())
    log["nan_left"] = int(torch.isnan(C.float()).sum())
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        start.record()
        for _ in range(20):
            invoke(ctypes.pointer(call))
        end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / 20
    log["ms_per_call"] = round(ms, 4)
    log["tflops"] = round(2 * m * N * K / ms / 1e9, 1)
    cubins = sorted(os.path.join(root, f) for root, _, files in os.walk(cache)
                    for f in files if f.endswith(".cubin"))
    log["cubins"] = [os.path.relpath(c, cache) for c in cubins]
    log["sass"] = {os.path.basename(c): sass_families(c) for c in cubins}
    del keep


def main():
    kernel, foreign, out = sys.argv[1:4]
    result = {"torch": torch.__version__, "triton": triton.__version__,
              "python": sys.version.split()[0], "gpu": torch.cuda.get_device_name(0),
              "cache_dir": cache}
    for name, path, m in [("expert_gemm_m4096", kernel, 4096), ("expert_gemm_m1000", kernel, 1000),
                          ("torch_matmul", foreign, 4096)]:
        log = {}
        t0 = time.perf_counter()
        try:
            probe(path, m, log)
        except Exception as error:  # recorded, the next probe still runs
            log["exception"] = repr(error)
        log["wall_s"] = round(time.perf_counter() - t0, 2)
        result[name] = log
        print(name, json.dumps(log), flush=True)
    with open(out, "w") as handle:
        json.dump(result, handle, indent=2)


if __name__ == "__main__":
    main()
