"""CPU tests of the Triton child's Python side (python/ptxbench_triton/child.py) that need no
GPU and no torch: the ctypes mirrors match compile/ptxbench_call.h and child/ptxbench_child.h,
the binding builds `run`'s arguments (a fake torch records the tensors it is asked for), the
candidate is imported from its folder and checked against the signature, exceptions become the
invoke-exception code with the traceback in the log, and, with the real libptxbench_child.so
($PTXBENCH_CHILD_LIBRARY, set by ctest), `python3 -m ptxbench_triton.child` serves requests
that need no CUDA. Run: python3 python/tests/test_child.py (ctest: triton_child_py)."""

import contextlib
import ctypes
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from ptxbench_triton import child  # noqa: E402

LIBRARY = os.environ.get("PTXBENCH_CHILD_LIBRARY", "")


class FakeTensor:
    def __init__(self, interface):
        self.interface = interface
        self.viewed_as = None

    def view(self, dtype):
        self.viewed_as = dtype
        return self


class FakeStream:
    def __init__(self, handle):
        self.handle = handle


class FakeCuda:
    def __init__(self):
        self.current = FakeStream(None)

    def ExternalStream(self, handle):  # noqa: N802 (torch's spelling)
        return FakeStream(handle)

    def current_stream(self):
        return self.current

    @contextlib.contextmanager
    def stream(self, stream):
        before, self.current = self.current, stream
        try:
            yield
        finally:
            self.current = before


class FakeTorch:
    """What child.py uses of torch: as_tensor over __cuda_array_interface__, bfloat16, and the
    stream API; it records every tensor made."""

    bfloat16 = "torch.bfloat16"

    def __init__(self):
        self.cuda = FakeCuda()
        self.made = []

    def as_tensor(self, array, device):
        assert device == "cuda"
        tensor = FakeTensor(array.__cuda_array_interface__)
        self.made.append(tensor)
        return tensor


GEMM_BINDING = {"params": ["A", "alpha", "C", "M"],
                "args": [{"kind": "tensor", "index": 0, "shape": [3, 8], "dtype": "bfloat16"},
                         {"kind": "scalar", "index": 0, "dtype": "float32"},
                         {"kind": "tensor", "index": 1, "shape": [3, 4], "dtype": "float32"},
                         {"kind": "axis", "index": 0}]}


def make_call(pointers, scalars, axes, stream=0, version=1):
    buffers = (ctypes.c_void_p * max(len(pointers), 1))(*pointers)
    values = (child.PtxbenchScalar * max(len(scalars), 1))()
    for i, value in enumerate(scalars):
        values[i].f32 = value
    var_axes = (ctypes.c_int64 * max(len(axes), 1))(*axes)
    call = child.PtxbenchCall(version=version, num_buffers=len(pointers),
                              num_scalars=len(scalars), num_var_axes=len(axes),
                              buffers=ctypes.cast(buffers, ctypes.POINTER(ctypes.c_void_p)),
                              scalars=ctypes.cast(values, ctypes.POINTER(child.PtxbenchScalar)),
                              var_axes=ctypes.cast(var_axes, ctypes.POINTER(ctypes.c_int64)),
                              stream=stream)
    return call, (buffers, values, var_axes)


class Layout(unittest.TestCase):
    def test_the_call_mirror_has_the_c_layout(self):
        self.assertEqual(ctypes.sizeof(child.PtxbenchScalar), 8)
        self.assertEqual(ctypes.sizeof(child.PtxbenchCall), 48)
        self.assertEqual(child.PtxbenchCall.buffers.offset, 16)
        self.assertEqual(child.PtxbenchCall.stream.offset, 40)

    def test_the_host_mirror_has_the_c_layout(self):
        self.assertEqual(ctypes.sizeof(child.PtxbenchChildHost), 32)
        self.assertEqual(child.PtxbenchChildHost.user.offset, 8)
        self.assertEqual(child.PtxbenchChildHost.load.offset, 16)
        self.assertEqual(child.PtxbenchChildHost.invoke.offset, 24)


class Arguments(unittest.TestCase):
    def setUp(self):
        self.seen = []
        self.binding = child.Binding(lambda *a: self.seen.append(a), GEMM_BINDING)
        self.torch = FakeTorch()

    def test_tensors_scalars_and_axes_arrive_in_parameter_order(self):
        call, keep = make_call([0x1000, 0x2000], [0.5], [3], stream=0x77)
        self.assertEqual(self.binding.invoke(ctypes.pointer(call), self.torch), 0)
        (a, alpha, c, m), = self.seen
        self.assertEqual(a.interface["data"], (0x1000, False))
        self.assertEqual(a.interface["shape"], (3, 8))
        self.assertEqual(a.interface["typestr"], "<i2")
        self.assertEqual(a.viewed_as, "torch.bfloat16")
        self.assertEqual(c.interface["typestr"], "<f4")
        self.assertIsNone(c.viewed_as)
        self.assertIsNone(c.interface["strides"])
        self.assertEqual(c.interface["stream"], 0x77)
        self.assertEqual(alpha, 0.5)
        self.assertEqual(m, 3)
        del keep

    def test_run_sees_the_calls_stream_as_torchs_current_stream(self):
        streams = []
        binding = child.Binding(
            lambda *a: streams.append(self.torch.cuda.current_stream().handle), GEMM_BINDING)
        call, keep = make_call([1, 2], [1.0], [3], stream=0x99)
        self.assertEqual(binding.invoke(ctypes.pointer(call), self.torch), 0)
        self.assertEqual(streams, [0x99])
        self.assertIsNone(self.torch.cuda.current_stream().handle)
        del keep

    def test_a_call_with_other_counts_or_version_is_a_bad_call_and_run_is_not_called(self):
        for pointers, scalars, axes, version in [([1], [1.0], [3], 1), ([1, 2], [], [3], 1),
                                                 ([1, 2], [1.0], [], 1),
                                                 ([1, 2], [1.0], [3], 7)]:
            call, keep = make_call(pointers, scalars, axes, version=version)
            self.assertEqual(self.binding.invoke(ctypes.pointer(call), self.torch),
                             child.PTXBENCH_INVOKE_BAD_CALL)
            del keep
        self.assertEqual(self.seen, [])

    def test_an_exception_in_run_is_the_invoke_exception_with_its_traceback_in_the_log(self):
        def run(*args):
            raise RuntimeError("tl.dot needs K >= 16")
        binding = child.Binding(run, GEMM_BINDING)
        call, keep = make_call([1, 2], [1.0], [3])
        log = io.StringIO()
        with contextlib.redirect_stderr(log):
            status = binding.invoke(ctypes.pointer(call), self.torch)
        self.assertEqual(status, child.PTXBENCH_INVOKE_EXCEPTION)
        self.assertIn("RuntimeError: tl.dot needs K >= 16", log.getvalue())
        self.assertIn("Traceback", binding.last_error)
        del keep

    def test_scalars_of_every_width_become_python_numbers(self):
        scalar = child.PtxbenchScalar()
        scalar.u16 = 0x3C00
        self.assertEqual(child.scalar_value(scalar, "float16"), 1.0)
        scalar.u16 = 0x3F80
        self.assertEqual(child.scalar_value(scalar, "bfloat16"), 1.0)
        scalar.i64 = -5
        self.assertEqual(child.scalar_value(scalar, "int64"), -5)
        scalar.u8 = 1
        self.assertIs(child.scalar_value(scalar, "bool"), True)
        with self.assertRaises(ValueError):
            child.scalar_value(scalar, "complex64")

    def test_a_binding_whose_names_and_arguments_disagree_is_refused(self):
        with self.assertRaises(ValueError):
            child.Binding(print, {"params": ["A"], "args": []})


class Candidate(unittest.TestCase):
    def write(self, text, name="kernel.py", folder=None):
        folder = folder or tempfile.mkdtemp()
        path = os.path.join(folder, name)
        with open(path, "w") as handle:
            handle.write(textwrap.dedent(text))
        return path

    def load(self, path, signature="def run(A, alpha, C, M)", binding=GEMM_BINDING):
        host = child.Host(torch_loader=FakeTorch)
        message = ctypes.create_string_buffer(512)
        log = io.StringIO()
        with contextlib.redirect_stderr(log):
            status = host.load(None, path.encode(), signature.encode(),
                               json.dumps(binding).encode(), message, 512)
        return host, status, message.value.decode(), log.getvalue()

    def test_run_with_the_expected_parameters_loads_and_is_called(self):
        path = self.write("calls = []\ndef run(A, alpha, C, M):\n    calls.append(M)\n")
        host, status, message, _ = self.load(path)
        self.assertEqual(status, 0, message)
        call, keep = make_call([1, 2], [1.0], [5])
        self.assertEqual(host.invoke(ctypes.pointer(call)), 0)
        self.assertEqual(sys.modules["ptxbench_candidate"].calls, [5])
        del keep

    def test_run_with_other_parameters_names_both_signatures(self):
        path = self.write("def run(A, C, M):\n    pass\n")
        _, status, message, _ = self.load(path)
        self.assertEqual(status, 1)
        self.assertIn("`run(A, C, M)` does not match `def run(A, alpha, C, M)`", message)

    def test_a_file_that_does_not_parse_fails_load_with_the_syntax_error(self):
        path = self.write("def run(A, alpha, C, M)\n    pass\n")
        _, status, message, log = self.load(path)
        self.assertEqual(status, 1)
        self.assertIn("SyntaxError", message)
        self.assertIn("Traceback", log)

    def test_a_module_without_run_or_that_raises_on_import_fails_load(self):
        _, status, message, _ = self.load(self.write("def kernel():\n    pass\n"))
        self.assertEqual(status, 1)
        self.assertIn("defines no function `run`", message)
        _, status, message, _ = self.load(self.write("x = 1\nraise ImportError('no triton')\n"))
        self.assertEqual(status, 1)
        self.assertIn("ImportError: no triton (line 2)", message)

    def test_the_candidate_imports_from_its_own_folder(self):
        folder = tempfile.mkdtemp()
        self.write("SCALE = 3\n", name="helper_for_test_child.py", folder=folder)
        path = self.write("import helper_for_test_child\n"
                          "def run(A, alpha, C, M):\n    return helper_for_test_child.SCALE\n",
                          folder=folder)
        _, status, message, _ = self.load(path)
        self.assertEqual(status, 0, message)

    def test_a_binding_that_disagrees_with_the_signature_fails_load(self):
        path = self.write("def run(A, alpha, C, M):\n    pass\n")
        _, status, message, _ = self.load(path, signature="def run(A, alpha, C, N)")
        self.assertEqual(status, 1)
        self.assertIn("not the signature's", message)

    def test_invoke_before_load_is_a_bad_call(self):
        call, keep = make_call([1, 2], [1.0], [5])
        self.assertEqual(child.Host(torch_loader=FakeTorch).invoke(ctypes.pointer(call)),
                         child.PTXBENCH_INVOKE_BAD_CALL)
        del keep

    def test_signature_params_reads_the_generated_one_line_form(self):
        self.assertEqual(child.signature_params("def run(A, B, C, M)"), ["A", "B", "C", "M"])
        self.assertEqual(child.signature_params("def run()"), [])
        with self.assertRaises(ValueError):
            child.signature_params("void run(const float* x)")


class CommandLine(unittest.TestCase):
    def test_the_library_comes_from_the_flag_or_the_environment(self):
        self.assertEqual(child.child_library(["--library", "/l.so", "--device", "0"], {}),
                         ("/l.so", ["--device", "0"]))
        self.assertEqual(child.child_library(["--device", "0"], {"PTXBENCH_CHILD_LIBRARY": "/e"}),
                         ("/e", ["--device", "0"]))
        with self.assertRaises(ValueError):
            child.child_library(["--device", "0"], {})

    def test_without_a_library_the_module_exits_with_its_usage(self):
        env = {k: v for k, v in os.environ.items() if k != "PTXBENCH_CHILD_LIBRARY"}
        env["PYTHONPATH"] = ROOT
        done = subprocess.run([sys.executable, "-m", "ptxbench_triton.child", "--device", "0"],
                              env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("usage: python3 -m ptxbench_triton.child", done.stderr)


@unittest.skipUnless(LIBRARY, "PTXBENCH_CHILD_LIBRARY is not set (ctest sets it)")
class OverTheLibrary(unittest.TestCase):
    """The module over the real libptxbench_child.so: requests that need no CUDA."""

    def start(self, extra=()):
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        env = dict(os.environ, PYTHONPATH=ROOT)
        process = subprocess.Popen(
            [sys.executable, "-m", "ptxbench_triton.child", "--library", LIBRARY, "--device", "0",
             "--request-fd", str(requests_r), "--reply-fd", str(replies_w), *extra],
            env=env, pass_fds=(requests_r, replies_w), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        os.close(requests_r)
        os.close(replies_w)
        return process, os.fdopen(requests_w, "w"), os.fdopen(replies_r)

    def test_it_answers_ping_and_exit_with_the_requests_ids(self):
        process, requests, replies = self.start()
        requests.write(json.dumps({"op": "ping", "id": 41}) + "\n")
        requests.flush()
        ping = json.loads(replies.readline())
        requests.write(json.dumps({"op": "exit", "id": 42}) + "\n")
        requests.flush()
        bye = json.loads(replies.readline())
        self.assertEqual(process.wait(timeout=60), 0)
        self.assertEqual((ping["id"], ping["ok"]), (41, True))
        self.assertEqual((bye["id"], bye["ok"]), (42, True))

    def test_a_call_before_load_is_refused_by_the_cpp_server(self):
        process, requests, replies = self.start()
        requests.write(json.dumps({"op": "call", "id": 5, "set": 0}) + "\n")
        requests.flush()
        reply = json.loads(replies.readline())
        requests.close()
        self.assertEqual(process.wait(timeout=60), 0)
        self.assertFalse(reply["ok"])
        self.assertEqual(reply["message"], "no candidate loaded")

    def test_a_bad_command_line_is_refused_by_the_cpp_parser(self):
        env = dict(os.environ, PYTHONPATH=ROOT)
        done = subprocess.run([sys.executable, "-m", "ptxbench_triton.child", "--library", LIBRARY,
                               "--device", "zero"], env=env, capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--device", done.stderr)


if __name__ == "__main__":
    unittest.main()
