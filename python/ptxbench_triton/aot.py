"""Ahead-of-time compilation of a Triton candidate without a GPU, for `ptxbench check kernel.py`'s
static SASS report (compile/triton_aot.hpp runs this file as a subprocess).

Problem: the cubins Triton builds depend on what `run` launches — which kernels, with which
constexprs (block sizes, flags), warps and stages, and the argument types and alignments of the
call — and `run` is host Python written against torch and a GPU. Deriving constexprs from the
kernel's definition alone cannot work: they are chosen by `run`.

Approach: run the candidate's `run` once, for the problem's default workload, in a world where
nothing touches a GPU.
  * `torch` is a stand-in module (FakeTorch): tensors carry shape, dtype, strides and a 256-byte
    aligned fake address (what the caching allocator guarantees) and no data; `torch.empty` and
    `torch.empty_like` make more of them (the allocator callback of triton.set_allocator),
    `torch.cuda.get_device_properties` answers with the target's SM count. Any other torch use
    raises AotUnsupported naming it, and the report says the file could not be specialised.
  * Triton's active driver is a stand-in (AotDriver) whose current target is the requested
    GPUTarget ("cuda", 90 or 100), so Triton's own binder specialises the arguments exactly as
    on a GPU (dtype, 16-byte divisibility, the integer 1 as a constant).
  * JITFunction.run is wrapped to compile with warmup=True (Triton compiles and does not launch)
    and to record each launch: kernel, grid, constexprs, options and the cubin.
  * An autotuned kernel (triton.autotune) compiles its first configuration after pruning, since
    choosing the best one needs timing on a GPU; the record says so. Config pre-hooks do not run.

Limits (each one reported, never guessed around): `run` that reads tensor data, calls torch
operations, or branches on values only a GPU knows cannot be specialised here; the cubins are
those of the default workload's call and the first autotuning configuration, which may differ
from what the evaluated call builds (the GPU evaluator scans the exact cubins of its call).

Output: one JSON object on stdout, {"ok": true, "launches": [...]} or {"ok": false, "stage":
"triton_missing" | "import" | "run" | "compile" | "no_launch", "message": ...}; the exit status
is 0 whenever that JSON was written.
"""

import argparse
import contextlib
import importlib.util
import io
import json
import math
import os
import re
import sys
import traceback
import types

# FlashInfer-Trace dtype -> (torch name, bytes per element).
DTYPES = {
    "float32": ("float32", 4),
    "float16": ("float16", 2),
    "bfloat16": ("bfloat16", 2),
    "float8_e4m3fn": ("float8_e4m3fn", 1),
    "float8_e5m2": ("float8_e5m2", 1),
    "int64": ("int64", 8),
    "int32": ("int32", 4),
    "int16": ("int16", 2),
    "int8": ("int8", 1),
    "uint8": ("uint8", 1),
    "bool": ("bool", 1),
}

# The parts the checks assume: H100/H200 SXM (132 SMs), B200 (148 SMs).
TARGETS = {"sm_90a": (90, 132), "sm_100a": (100, 148)}

ALIGNMENT = 256
MAX_RECORDED_LAUNCHES = 64


class AotUnsupported(Exception):
    """Something `run` did that the GPU-less specialisation does not model."""


class FakeDtype:

    def __init__(self, name, itemsize):
        self.name = name
        self.itemsize = itemsize
        self.is_floating_point = name.startswith(("float", "bfloat"))

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


class FakeDevice:

    def __init__(self, spec="cuda", index=None):
        if isinstance(spec, FakeDevice):
            spec, index = spec.type, spec.index
        spec = str(spec)
        if ":" in spec:
            spec, index = spec.split(":", 1)
            index = int(index)
        self.type = spec
        self.index = 0 if index is None and spec == "cuda" else index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    __repr__ = __str__

    def __eq__(self, other):
        return str(self) == str(FakeDevice(other)) if isinstance(other, (str, FakeDevice)) else False

    def __hash__(self):
        return hash(str(self))


class Size(tuple):

    def numel(self):
        return math.prod(self)


def contiguous_strides(shape):
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return tuple(reversed(strides))


class FakeAllocator:
    """Hands out distinct, ALIGNMENT-aligned addresses; no memory behind them."""

    def __init__(self):
        self.next = 1 << 32

    def allocate(self, nbytes):
        address = self.next
        self.next += (max(nbytes, 1) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT + ALIGNMENT
        return address


ALLOCATOR = FakeAllocator()


class FakeTensor:
    """A torch.Tensor's metadata (shape, dtype, strides, address) without data."""

    def __init__(self, shape, dtype, strides=None, address=None, offset=0):
        self._shape = Size(int(d) for d in shape)
        self.dtype = dtype
        self._strides = tuple(strides) if strides is not None else contiguous_strides(self._shape)
        self._address = address if address is not None else ALLOCATOR.allocate(
            self._shape.numel() * dtype.itemsize)
        self._offset = offset
        self.device = FakeDevice("cuda", 0)
        self.is_cuda = True
        self.requires_grad = False

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return len(self._shape)

    def dim(self):
        return len(self._shape)

    def size(self, dim=None):
        return self._shape if dim is None else self._shape[dim]

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def numel(self):
        return self._shape.numel()

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._address + self._offset * self.dtype.itemsize

    def storage_offset(self):
        return self._offset

    def is_contiguous(self):
        return self._strides == contiguous_strides(self._shape)

    def contiguous(self):
        if self.is_contiguous():
            return self
        raise AotUnsupported("Tensor.contiguous() of a non-contiguous tensor (a copy kernel)")

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not self.is_contiguous():
            raise AotUnsupported("Tensor.view of a non-contiguous tensor")
        if shape.count(-1) > 1:
            raise AotUnsupported("Tensor.view with more than one -1")
        known = math.prod(d for d in shape if d != -1)
        shape = tuple(self.numel() // known if d == -1 else d for d in shape)
        if math.prod(shape) != self.numel():
            raise AotUnsupported(f"Tensor.view{shape} of a tensor of shape {tuple(self._shape)}")
        return FakeTensor(shape, self.dtype, None, self._address, self._offset)

    reshape = view

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return FakeTensor([self._shape[d] for d in dims], self.dtype,
                          [self._strides[d] for d in dims], self._address, self._offset)

    def transpose(self, a, b):
        dims = list(range(self.ndim))
        dims[a], dims[b] = dims[b], dims[a]
        return self.permute(dims)

    def t(self):
        return self.transpose(0, 1)

    @property
    def T(self):  # noqa: N802 (torch's spelling)
        return self.permute(list(reversed(range(self.ndim))))

    @property
    def mT(self):  # noqa: N802
        return self.transpose(-2, -1)

    def __getattr__(self, name):
        raise AotUnsupported(f"Tensor.{name}")

    def __repr__(self):
        return f"FakeTensor({tuple(self._shape)}, {self.dtype})"


class FakeProperties:

    def __init__(self, sm_count, major):
        self.multi_processor_count = sm_count
        self.major = major // 10
        self.minor = major % 10
        self.name = "NVIDIA H200" if major == 90 else "NVIDIA B200"


class FakeStream:
    cuda_stream = 0

    def synchronize(self):
        pass


def make_fake_torch(capability, sm_count):
    torch = types.ModuleType("torch")
    dtypes = {}
    for torch_name, size in DTYPES.values():
        dtypes[torch_name] = FakeDtype(torch_name, size)
        setattr(torch, torch_name, dtypes[torch_name])
    for alias, name in (("float", "float32"), ("half", "float16"), ("long", "int64"),
                        ("int", "int32"), ("short", "int16")):
        setattr(torch, alias, dtypes[name])
    torch.dtype = FakeDtype
    torch.device = FakeDevice
    torch.Size = Size
    torch.Tensor = FakeTensor

    def empty(*size, dtype=None, device=None, **_):
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        return FakeTensor(size, dtype or dtypes["float32"])

    def empty_like(tensor, dtype=None, **_):
        return FakeTensor(tensor.shape, dtype or tensor.dtype)

    torch.empty = empty
    torch.empty_like = empty_like

    cuda = types.ModuleType("torch.cuda")
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.set_device = lambda _device: None
    cuda.synchronize = lambda *_: None
    cuda.current_stream = lambda *_: FakeStream()
    cuda.get_device_properties = lambda *_: FakeProperties(sm_count, capability)
    cuda.get_device_capability = lambda *_: (capability // 10, capability % 10)
    cuda.get_device_name = lambda *_: FakeProperties(sm_count, capability).name

    def unsupported_cuda(name):
        raise AotUnsupported(f"torch.cuda.{name}")

    cuda.__getattr__ = unsupported_cuda
    torch.cuda = cuda

    def unsupported(name):
        raise AotUnsupported(f"torch.{name}")

    torch.__getattr__ = unsupported
    return torch


def make_driver(target):
    """Triton's active driver for a machine without a GPU: the requested target, device 0."""
    from triton.backends.driver import DriverBase

    class AotDriver(DriverBase):

        @classmethod
        def is_active(cls):
            return False

        def get_current_target(self):
            return target

        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

        def get_active_torch_device(self):
            return FakeDevice("cuda", 0)

        def get_device_interface(self):
            return sys.modules["torch"].cuda

        def get_benchmarker(self):
            raise AotUnsupported("benchmarking (autotuning needs a GPU)")

        def get_empty_cache_for_benchmark(self):
            raise AotUnsupported("benchmarking (autotuning needs a GPU)")

        def clear_cache(self, cache):
            pass

        def map_python_to_cpp_type(self, ty):
            raise AotUnsupported("Triton's C++ launcher")

    return AotDriver()


def describe_constexpr(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return str(value)


class Recorder:
    """Wraps JITFunction.run and Autotuner.run for one `run` call; collects the launches."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.launches = []
        self.seen = set()
        self.autotuned = {}

    def record(self, fn, grid, args, kwargs, kernel):
        if kernel is None:
            return
        if hasattr(kernel, "result"):
            kernel = kernel.result()
        cubin = kernel.asm.get("cubin")
        if cubin is None:
            raise AotUnsupported(f"Triton built no cubin for {fn.__name__}")
        key = (kernel.metadata.name, kernel.hash)
        if key in self.seen:
            return
        if len(self.launches) >= MAX_RECORDED_LAUNCHES:
            raise AotUnsupported(f"more than {MAX_RECORDED_LAUNCHES} distinct kernels in one call")
        self.seen.add(key)
        named = dict(zip(fn.arg_names, args))
        named.update({k: v for k, v in kwargs.items() if k in fn.arg_names})
        if callable(grid):
            try:
                grid = grid(named)
            except Exception:  # a grid lambda may read what only a launch has
                grid = None
        grid = [int(g) for g in grid] if isinstance(grid, (tuple, list)) else None
        path = os.path.join(self.out_dir, f"{len(self.launches):02d}_{kernel.metadata.name}.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        constexprs = {
            fn.arg_names[p.num]: describe_constexpr(named.get(p.name, p.default))
            for p in fn.params if p.is_constexpr and p.name in named
        }
        self.launches.append({
            "kernel": fn.__name__,
            "function": kernel.metadata.name,
            "cubin": path,
            "grid": grid,
            "num_warps": kernel.metadata.num_warps,
            "num_stages": kernel.metadata.num_stages,
            "shared_bytes": kernel.metadata.shared,
            "constexprs": constexprs,
            "autotune": self.autotuned.get(fn.__name__),
        })

    @contextlib.contextmanager
    def installed(self):
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction
        original_run = JITFunction.run
        original_autotune = Autotuner.run
        recorder = self

        def recording_run(self, *args, grid, warmup, **kwargs):
            kernel = original_run(self, *args, grid=grid, warmup=True, **kwargs)
            recorder.record(self, grid, args, kwargs, kernel)
            return kernel

        def first_config_run(self, *args, **kwargs):
            self.nargs = dict(zip(self.arg_names, args))
            pruned = self.prune_configs(kwargs)
            self.nargs = None
            config = pruned[0]
            recorder.autotuned[self.base_fn.__name__] = {
                "config": str(config),
                "configs": len(self.configs),
                "rule": "first configuration after pruning (choosing the best needs a GPU)",
            }
            return self.fn.run(*args, **kwargs, **config.all_kwargs())

        JITFunction.run = recording_run
        Autotuner.run = first_config_run
        try:
            yield
        finally:
            JITFunction.run = original_run
            Autotuner.run = original_autotune


def make_arguments(spec, torch):
    args = []
    for param in spec["params"]:
        if param["kind"] == "tensor":
            name = DTYPES.get(param["dtype"])
            if name is None:
                raise AotUnsupported(f"tensors of dtype {param['dtype']}")
            args.append(FakeTensor(param["shape"], getattr(torch, name[0])))
        else:
            args.append(param["value"])
    return args


def failure(stage, message):
    return {"ok": False, "stage": stage, "message": message}


def candidate_traceback(error, kernel_path):
    """The traceback lines of the candidate's own file, then the exception."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == kernel_path]
    lines = [f"line {f.lineno}: {f.line}" for f in frames[-3:] if f.line]
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    return "\n".join(lines + [text])


def jit_functions(module):
    """The module's @triton.jit functions, under their autotune/heuristics wrappers."""
    from triton.runtime.jit import JITFunction
    found = []
    for value in vars(module).values():
        for _ in range(4):  # triton.autotune over triton.heuristics over triton.jit
            if value is None or isinstance(value, JITFunction):
                break
            value = getattr(value, "fn", None)
        if isinstance(value, JITFunction) and value not in found:
            found.append(value)
    return found


def compile_error_text(error, module, kernel_path):
    """Triton's CompilationError placed in the candidate's file: the kernel, the file line and
    its text, Triton's reason, and the launch in `run` that compiled it."""
    node, src = getattr(error, "node", None), getattr(error, "src", None)
    reason = (getattr(error, "error_message", None) or "").strip() or str(error).splitlines()[-1]
    launch = [f"line {f.lineno}: {f.line}" for f in traceback.extract_tb(error.__traceback__)
              if f.filename == kernel_path and f.line]
    located = None
    for fn in jit_functions(module) if module is not None else []:
        if src is None or fn._src != src or not hasattr(node, "lineno"):
            continue
        raw = "".join(fn.raw_src)
        match = re.search(r"^\s*def\s", raw, re.MULTILINE)
        before_def = raw[:match.start()].count("\n") if match else 0
        line = fn.starting_line_number + before_def + node.lineno - 1
        text = src.split("\n")[node.lineno - 1].strip()
        located = f"kernel {fn.__name__}, line {line}: `{text}`: {reason}"
    if located is None:
        return candidate_traceback(error, kernel_path)
    return located + (f" (launched from {launch[-1]})" if launch else "")


def compile_candidate(kernel_path, spec, out_dir):
    try:
        import triton
        from triton.backends.compiler import GPUTarget
    except Exception as error:  # ImportError, or a broken install
        return failure("triton_missing", f"cannot import triton: {error}")
    capability, sm_count = TARGETS[spec["arch"]]
    triton.runtime.driver.set_active(make_driver(GPUTarget("cuda", capability, 32)))
    sys.modules["torch"] = make_fake_torch(capability, sm_count)
    sys.modules["torch.cuda"] = sys.modules["torch"].cuda
    recorder = Recorder(out_dir)
    stage = "import"
    module = None
    try:
        module_spec = importlib.util.spec_from_file_location("ptxbench_candidate", kernel_path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        run = getattr(module, "run", None)
        if not callable(run):
            return failure("import", "the candidate defines no callable `run`")
        args = make_arguments(spec, sys.modules["torch"])
        stage = "run"
        with recorder.installed():
            run(*args)
    except AotUnsupported as error:
        return failure("run", f"`run` uses {error}, which the ahead-of-time specialisation "
                       "without a GPU does not model")
    except triton.CompilationError as error:
        return failure("compile", compile_error_text(error, module, kernel_path))
    except SystemExit as error:
        return failure(stage, f"the candidate called sys.exit({error.code!r})")
    except Exception as error:
        is_compile = type(error).__module__.startswith("triton")
        return failure("compile" if is_compile and stage == "run" else stage,
                       candidate_traceback(error, kernel_path))
    if not recorder.launches:
        return failure("no_launch", "`run` launched no @triton.jit kernel")
    return {"ok": True, "arch": spec["arch"], "triton": triton.__version__,
            "launches": recorder.launches}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel")
    parser.add_argument("--spec", required=True, help="JSON file: arch and run's arguments")
    parser.add_argument("--out", required=True, help="folder for the cubins")
    options = parser.parse_args(argv)
    with open(options.spec) as f:
        spec = json.load(f)
    if spec.get("arch") not in TARGETS:
        result = failure("spec", f"unknown arch {spec.get('arch')!r} ({', '.join(TARGETS)})")
    else:
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            result = compile_candidate(os.path.abspath(options.kernel), spec, options.out)
        if captured.getvalue():
            result["stdout"] = captured.getvalue()[-4000:]
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
