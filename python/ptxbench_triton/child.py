"""The Python side of the Triton candidate child: `python3 -m ptxbench_triton.child` (docs/
evaluation.md, "Triton candidates: how the child hosts Python").

Problem: the C++ child owns the protocol, the IPC buffers, the sentinel, CUPTI timing and the
counts; a Triton candidate's `run` needs torch and Triton in the process that launches its
kernels. This module is the only Python in that process besides the candidate: it runs the C++
child from libptxbench_child.so (child/ptxbench_child.h) with two callbacks, `load` and
`invoke`, and turns one `PtxbenchCall` (compile/ptxbench_call.h) into a call of `run` on torch
tensors that alias the call's device buffers, on the call's stream.

Approach: the library is loaded with ctypes before torch (so the CUDA runtime it links is the
process's); `ptxbench_child_host_main` serves the supervisor's requests and calls back here.
`load` imports the candidate from its evaluation folder and checks `run`'s parameters against
the signature and the binding the `load` request carries (frontend/triton/binding.hpp: the
parameters in order, each a tensor buffer with its shape and dtype, a scalar, or a variable
axis). `invoke` wraps each buffer through `__cuda_array_interface__` (no copy), makes the call's
stream torch's current stream (`torch.cuda.ExternalStream`) so Triton launches there, and calls
`run`. The C++ side runs the first call inside `load` (JIT compilation, autotuning) before any
traced or timed call.

Invariants: nothing here decides correctness or timing; a Python exception in `run` becomes
PTXBENCH_INVOKE_EXCEPTION with the traceback on stderr (the child's log), never a crash; a
candidate that does not import or whose `run` has other parameters fails `load` with a sentence
that names both signatures.
"""

import ctypes
import importlib.util
import inspect
import json
import os
import re
import struct
import sys
import traceback

PTXBENCH_CALL_VERSION = 1
PTXBENCH_CHILD_HOST_VERSION = 1
PTXBENCH_INVOKE_BAD_CALL = -1
PTXBENCH_INVOKE_EXCEPTION = -2

# FlashInfer-Trace dtype -> __cuda_array_interface__ typestr. bfloat16 has none: it is aliased
# as int16 and viewed as bfloat16 (the same bits).
TYPESTRS = {
    "float64": "<f8",
    "float32": "<f4",
    "float16": "<f2",
    "bfloat16": "<i2",
    "int64": "<i8",
    "int32": "<i4",
    "int16": "<i2",
    "int8": "|i1",
    "uint8": "|u1",
    "bool": "|b1",
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
LOAD_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                           ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)


class PtxbenchChildHost(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("user", ctypes.c_void_p), ("load", LOAD_FN),
                ("invoke", INVOKE_FN)]


class DeviceArray:
    """A device buffer as __cuda_array_interface__ (version 3), for torch.as_tensor."""

    def __init__(self, pointer, shape, typestr, stream):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (pointer, False), "strides": None,
                                         "version": 3, "stream": stream or None}


def tensor_of(torch, pointer, shape, dtype, stream):
    """A torch tensor aliasing `pointer` (contiguous `shape` of FlashInfer-Trace `dtype`)."""
    if dtype not in TYPESTRS:
        raise ValueError(f"no tensor form for dtype {dtype}")
    alias = torch.as_tensor(DeviceArray(pointer, shape, TYPESTRS[dtype], stream), device="cuda")
    return alias.view(torch.bfloat16) if dtype == "bfloat16" else alias


def scalar_value(scalar, dtype):
    """The Python number a PtxbenchScalar of FlashInfer-Trace `dtype` carries."""
    if dtype == "float32":
        return scalar.f32
    if dtype == "float64":
        return scalar.f64
    if dtype == "float16":
        return struct.unpack("<e", struct.pack("<H", scalar.u16))[0]
    if dtype == "bfloat16":
        return struct.unpack("<f", struct.pack("<I", scalar.u16 << 16))[0]
    if dtype == "bool":
        return bool(scalar.u8)
    if dtype in ("int64", "int32", "int16", "int8", "uint8"):
        return {"int64": scalar.i64, "int32": scalar.i32, "int16": scalar.i16,
                "int8": scalar.i8, "uint8": scalar.u8}[dtype]
    raise ValueError(f"no scalar form for dtype {dtype}")


def signature_params(signature):
    """The parameter names of "def run(A, B, C, M)"; ValueError for anything else."""
    match = re.fullmatch(r"\s*def\s+run\s*\(([^)]*)\)\s*:?\s*", signature)
    if not match:
        raise ValueError(f"`{signature}` is not a `def run(...)` signature")
    return [p.strip() for p in match.group(1).split(",") if p.strip()]


class Binding:
    """How one definition's `run` is called: its parameters in order, each a tensor buffer
    (shape, dtype), a scalar (dtype) or a variable axis (its index among the call's axes)."""

    def __init__(self, run, binding):
        self.run = run
        self.params = list(binding["params"])
        self.args = list(binding["args"])
        if len(self.params) != len(self.args):
            raise ValueError("the binding names {} parameters but describes {}".format(
                len(self.params), len(self.args)))
        self.buffers = sum(1 for a in self.args if a["kind"] == "tensor")
        self.scalars = sum(1 for a in self.args if a["kind"] == "scalar")
        self.axes = sum(1 for a in self.args if a["kind"] == "axis")
        self.last_error = None

    def arguments(self, torch, call, stream):
        out = []
        for arg in self.args:
            kind, index = arg["kind"], arg["index"]
            if kind == "tensor":
                out.append(tensor_of(torch, call.buffers[index], arg["shape"], arg["dtype"],
                                     stream))
            elif kind == "scalar":
                out.append(scalar_value(call.scalars[index], arg["dtype"]))
            elif kind == "axis":
                out.append(int(call.var_axes[index]))
            else:
                raise ValueError(f"unknown binding kind {kind}")
        return out

    def matches(self, call):
        return (call.version == PTXBENCH_CALL_VERSION and call.num_buffers == self.buffers and
                call.num_scalars == self.scalars and call.num_var_axes == self.axes)

    def invoke(self, call_pointer, torch=None):
        if not call_pointer or not self.matches(call_pointer.contents):
            return PTXBENCH_INVOKE_BAD_CALL
        call = call_pointer.contents
        try:
            if torch is None:
                import torch
            stream = torch.cuda.ExternalStream(call.stream) if call.stream else \
                torch.cuda.current_stream()
            with torch.cuda.stream(stream):
                self.run(*self.arguments(torch, call, call.stream))
        except BaseException:  # the candidate's own failure (or exit), reported as the call's
            self.last_error = traceback.format_exc()
            sys.stderr.write(self.last_error)
            sys.stderr.flush()
            return PTXBENCH_INVOKE_EXCEPTION
        return 0


def import_candidate(path):
    """The candidate module from its file; its folder is the module's search path's head, so a
    candidate may import a helper it was written beside (never the reply text directly)."""
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location("ptxbench_candidate", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ptxbench_candidate"] = module
    spec.loader.exec_module(module)
    return module


def load_candidate(path, expected_params):
    """The candidate module's `run`; ValueError naming both signatures when they differ."""
    run = getattr(import_candidate(path), "run", None)
    if not callable(run):
        raise ValueError(f"{os.path.basename(path)} defines no function `run`")
    params = list(inspect.signature(run).parameters)
    if params != list(expected_params):
        raise ValueError(f"`run({', '.join(params)})` does not match "
                         f"`def run({', '.join(expected_params)})`")
    return run


def write_message(buffer, size, text):
    data = text.encode("utf-8", "replace")[:max(size - 1, 0)]
    ctypes.memmove(buffer, data + b"\0", len(data) + 1)


class Host:
    """The two callbacks of PtxbenchChildHost; keeps the binding and the ctypes thunks alive."""

    def __init__(self, torch_loader=None):
        self.binding = None
        self.torch = None
        self.torch_loader = torch_loader or (lambda: __import__("torch"))
        self.load_fn = LOAD_FN(self.load)
        self.invoke_fn = INVOKE_FN(self.invoke)

    def load(self, _user, module, signature, binding, message, size):
        try:
            described = json.loads(binding.decode())
            expected = signature_params(signature.decode())
            if expected != list(described["params"]):
                raise ValueError(f"the binding's parameters {described['params']} are not "
                                 f"the signature's {expected}")
            run = load_candidate(module.decode(), expected)
            self.binding = Binding(run, described)
            self.torch = self.torch_loader()
            return 0
        except BaseException as error:  # a candidate that does not import is its own failure
            sys.stderr.write(traceback.format_exc())
            sys.stderr.flush()
            last = traceback.extract_tb(error.__traceback__)
            where = f" (line {last[-1].lineno})" if last and last[-1].filename == \
                module.decode() else ""
            write_message(message, size, f"{type(error).__name__}: {error}{where}")
            return 1

    def invoke(self, call_pointer):
        if self.binding is None:
            return PTXBENCH_INVOKE_BAD_CALL
        return self.binding.invoke(call_pointer, self.torch)

    def record(self):
        return PtxbenchChildHost(PTXBENCH_CHILD_HOST_VERSION, None, self.load_fn,
                                 self.invoke_fn)


def child_library(argv, environ):
    """(path of libptxbench_child.so, the child's own arguments): `--library PATH` first, else
    $PTXBENCH_CHILD_LIBRARY; ValueError when neither is given."""
    if len(argv) >= 2 and argv[0] == "--library":
        return argv[1], argv[2:]
    if environ.get("PTXBENCH_CHILD_LIBRARY"):
        return environ["PTXBENCH_CHILD_LIBRARY"], argv
    raise ValueError("usage: python3 -m ptxbench_triton.child --library libptxbench_child.so "
                     "--device D --request-fd N --reply-fd M [--buffer-fd B]")


def main(argv):
    try:
        path, args = child_library(argv, os.environ)
    except ValueError as error:
        sys.stderr.write(f"{error}\n")
        return 2
    library = ctypes.CDLL(path)  # before torch: its CUDA runtime is the process's
    library.ptxbench_child_host_main.restype = ctypes.c_int
    library.ptxbench_child_host_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                                 ctypes.POINTER(PtxbenchChildHost)]
    words = ["ptxbench_triton.child"] + args
    c_argv = (ctypes.c_char_p * len(words))(*[w.encode() for w in words])
    host = Host()
    record = host.record()
    status = library.ptxbench_child_host_main(len(words), c_argv, ctypes.byref(record))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # no interpreter teardown after the child's own: torch's can hang


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
