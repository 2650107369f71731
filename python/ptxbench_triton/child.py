"""The Python side of the Triton candidate child (prototype; docs/evaluation.md, "Triton
candidates: how the child hosts Python").

Problem: the C++ child owns the protocol, the IPC buffers, the sentinel, CUPTI timing and the
counts; a Triton candidate's `run` needs torch and Triton in the process that launches its
kernels. This module is the only Python in that process besides the candidate: it turns one
`PtxbenchCall` (compile/ptxbench_call.h) into a call of `run` on torch tensors that alias the
call's device buffers, on the call's stream.

Approach: `PtxbenchCall` is mirrored with ctypes; `invoke_callback(binding)` is a C function
pointer (`int (*)(const PtxbenchCall*)`) that the C++ child library calls exactly where it calls
a CUDA candidate's `ptxbench_invoke`. Buffers become tensors through `__cuda_array_interface__`
(no copy); the stream becomes torch's current stream so Triton launches there. `warm_up` runs
the first calls (JIT, autotuning) before any timed window and reports their wall time;
`cache_cubins` lists what Triton built in the per-evaluation TRITON_CACHE_DIR, for the SASS
scan and the candidate's kernel names.

Invariants: nothing here decides correctness or timing; a Python exception in `run` becomes
PTXBENCH_INVOKE_EXCEPTION with the traceback on stderr (the child's log), never a crash.
"""

import ctypes
import importlib.util
import inspect
import os
import sys
import time
import traceback

PTXBENCH_CALL_VERSION = 1
PTXBENCH_INVOKE_BAD_CALL = -1
PTXBENCH_INVOKE_EXCEPTION = -2

# FlashInfer-Trace dtype -> (__cuda_array_interface__ typestr, torch dtype name, bytes).
DTYPES = {
    "float32": ("<f4", "float32", 4),
    "float16": ("<f2", "float16", 2),
    "bfloat16": ("<V2", "bfloat16", 2),  # no typestr for bf16: aliased as int16, then viewed
    "int64": ("<i8", "int64", 8),
    "int32": ("<i4", "int32", 4),
    "int16": ("<i2", "int16", 2),
    "int8": ("|i1", "int8", 1),
    "bool": ("|b1", "bool", 1),
}


class PtxbenchScalar(ctypes.Union):
    _fields_ = [("f32", ctypes.c_float), ("f64", ctypes.c_double), ("i64", ctypes.c_int64),
                ("i32", ctypes.c_int32), ("i16", ctypes.c_int16), ("i8", ctypes.c_int8),
                ("u16", ctypes.c_uint16), ("u8", ctypes.c_uint8)]


class PtxbenchCall(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("num_buffers", ctypes.c_uint32),
                ("num_scalars", ctypes.c_uint32), ("num_var_axes", ctypes.c_uint32),
                ("buffers", ctypes.POINTER(ctypes.c_void_p)),
                ("scalars", ctypes.POINTER(PtxbenchScalar)),
                ("var_axes", ctypes.POINTER(ctypes.c_int64)), ("stream", ctypes.c_void_p)]


INVOKE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(PtxbenchCall))


class DeviceArray:
    """A device buffer as __cuda_array_interface__ (version 3), for torch.as_tensor."""

    def __init__(self, pointer, shape, typestr, stream):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (pointer, False), "strides": None,
                                         "version": 3, "stream": stream or None}


def tensor_of(torch, pointer, shape, dtype, stream):
    """A torch tensor aliasing `pointer` (contiguous `shape` of FlashInfer-Trace `dtype`)."""
    typestr, torch_name, _ = DTYPES[dtype]
    if dtype == "bfloat16":
        alias = torch.as_tensor(DeviceArray(pointer, shape, "<i2", stream), device="cuda")
        return alias.view(torch.bfloat16)
    return torch.as_tensor(DeviceArray(pointer, shape, typestr, stream), device="cuda")


class Binding:
    """How one definition's `run` is called: tensor specs, scalar dtypes, var-axis names."""

    def __init__(self, run, tensors, scalars, axes, scalar_positions):
        self.run = run
        self.tensors = tensors  # [(name, [dim or axis name...], dtype)] inputs then outputs
        self.scalars = scalars  # [(name, dtype)]
        self.axes = axes  # var axis names in definition order
        self.scalar_positions = scalar_positions  # argument index of each scalar input
        self.last_error = None

    def shape(self, dims, axis_values):
        return [axis_values[d] if isinstance(d, str) else d for d in dims]

    def arguments(self, torch, buffers, scalars, axis_values, stream):
        args = [tensor_of(torch, buffers[i], self.shape(dims, axis_values), dtype, stream)
                for i, (_, dims, dtype) in enumerate(self.tensors)]
        for (name, dtype), position in zip(self.scalars, self.scalar_positions):
            value = scalars[len([p for p in self.scalar_positions if p < position])]
            args.insert(position, value.f32 if dtype == "float32" else value.i64
                        if dtype == "int64" else value.i32)
        return args + [axis_values[a] for a in self.axes]

    def invoke(self, call):
        c = call.contents
        if c.version != PTXBENCH_CALL_VERSION or c.num_buffers != len(self.tensors) or \
                c.num_scalars != len(self.scalars) or c.num_var_axes != len(self.axes):
            return PTXBENCH_INVOKE_BAD_CALL
        try:
            import torch
            axis_values = {a: c.var_axes[i] for i, a in enumerate(self.axes)}
            buffers = [c.buffers[i] for i in range(c.num_buffers)]
            stream = torch.cuda.ExternalStream(c.stream) if c.stream else \
                torch.cuda.current_stream()
            with torch.cuda.stream(stream):
                self.run(*self.arguments(torch, buffers, c.scalars, axis_values,
                                         c.stream))
        except BaseException:  # the candidate's own failure (or exit), reported as the call's
            self.last_error = traceback.format_exc()
            sys.stderr.write(self.last_error)
            return PTXBENCH_INVOKE_EXCEPTION
        return 0


def invoke_callback(binding):
    """The C function pointer the C++ child calls; keep it alive as long as the child runs."""
    return INVOKE_FN(binding.invoke)


def load_candidate(path, expected_params):
    """The candidate module's `run`; ValueError naming both signatures when they differ."""
    spec = importlib.util.spec_from_file_location("ptxbench_candidate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    run = getattr(module, "run", None)
    if not callable(run):
        raise ValueError(f"{path} defines no function `run`")
    params = list(inspect.signature(run).parameters)
    if params != list(expected_params):
        raise ValueError(f"`run({', '.join(params)})` does not match "
                         f"`def run({', '.join(expected_params)})`")
    return run


def warm_up(call_once, calls=1):
    """Runs the first calls (Triton JIT, autotuning) before any timed window; wall ms."""
    start = time.perf_counter()
    for _ in range(calls):
        status = call_once()
        if status != 0:
            return status, (time.perf_counter() - start) * 1e3
    return 0, (time.perf_counter() - start) * 1e3


def cache_cubins(cache_dir):
    """The cubins Triton wrote into `cache_dir`, sorted: what the SASS scan reads."""
    found = []
    for root, _, files in os.walk(cache_dir):
        found.extend(os.path.join(root, f) for f in files if f.endswith(".cubin"))
    return sorted(found)
