"""Tests of the ahead-of-time compile without a GPU (ptxbench_triton/aot.py): what `run` launches
is compiled for sm_90a/sm_100a with its constexprs, each failure has its stage and a message that
points into the candidate. Needs Triton: $PTXBENCH_TRITON_PATH or .deps/python-triton
(scripts/setup.sh). Run: python3 python/tests/test_aot.py (ctest: triton_aot_py)."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PACKAGE_ROOT = os.path.join(ROOT, "python")
TRITON_PATH = os.environ.get("PTXBENCH_TRITON_PATH") or os.path.join(ROOT, ".deps", "python-triton")
FIXTURES = os.path.join(ROOT, "tests", "data", "compile", "triton")

GEMM_PARAMS = [
    {"name": "A", "kind": "tensor", "dtype": "bfloat16", "shape": [4096, 5120]},
    {"name": "B", "kind": "tensor", "dtype": "bfloat16", "shape": [7168, 5120]},
    {"name": "C", "kind": "tensor", "dtype": "bfloat16", "shape": [4096, 7168]},
    {"name": "M", "kind": "scalar", "value": 4096},
]

HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n\n"

COPY_KERNEL = HEADER + textwrap.dedent('''\
    @triton.jit
    def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
    ''')


def compile_file(path, arch="sm_90a", params=GEMM_PARAMS):
    with tempfile.TemporaryDirectory() as scratch:
        spec = os.path.join(scratch, "spec.json")
        out = os.path.join(scratch, "cubins")
        os.makedirs(out)
        with open(spec, "w") as f:
            json.dump({"arch": arch, "params": params}, f)
        env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(scratch, "cache"),
                   TRITON_HOME=scratch,
                   PYTHONPATH=os.pathsep.join([PACKAGE_ROOT, TRITON_PATH]))
        done = subprocess.run([sys.executable, "-B", "-m", "ptxbench_triton.aot", path, "--spec",
                               spec, "--out", out], env=env, capture_output=True, text=True,
                              timeout=600)
        if done.returncode != 0:
            raise AssertionError(f"aot.py exited {done.returncode}: {done.stderr}")
        result = json.loads(done.stdout)
        for launch in result.get("launches", []):
            with open(launch["cubin"], "rb") as f:
                launch["elf"] = f.read(4) == b"\x7fELF"
        return result


def compile_source(source, **kwargs):
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "kernel.py")
        with open(path, "w") as f:
            f.write(source)
        return compile_file(path, **kwargs)


class TritonIsInstalled(unittest.TestCase):
    def test_triton_is_where_the_tests_look(self):
        self.assertTrue(os.path.isdir(os.path.join(TRITON_PATH, "triton")),
                        f"no Triton in {TRITON_PATH}: run scripts/setup.sh")


class CompilesWhatRunLaunches(unittest.TestCase):
    def test_the_persistent_tma_gemm_compiles_for_hopper_with_runs_constexprs(self):
        result = compile_file(os.path.join(FIXTURES, "gemm_persistent_tma.py"))
        self.assertTrue(result["ok"], result)
        self.assertEqual(len(result["launches"]), 1)
        launch = result["launches"][0]
        self.assertEqual(launch["kernel"], "gemm_persistent")
        self.assertTrue(launch["elf"])
        self.assertEqual(launch["grid"], [132])  # min(H200 SMs, tiles)
        self.assertEqual(launch["constexprs"]["BM"], 128)
        self.assertEqual(launch["constexprs"]["NUM_SMS"], 132)
        self.assertEqual(launch["num_warps"], 8)
        self.assertEqual(launch["num_stages"], 4)

    def test_blackwell_sees_its_own_sm_count(self):
        result = compile_file(os.path.join(FIXTURES, "gemm_persistent_tma.py"), arch="sm_100a")
        self.assertTrue(result["ok"], result)
        self.assertEqual(result["launches"][0]["grid"], [148])

    def test_every_distinct_launch_is_compiled_once(self):
        source = COPY_KERNEL + textwrap.dedent('''\


            def run(A, B, C, M):
                copy_kernel[(4,)](A, C, 1024, BLOCK=256)
                copy_kernel[(4,)](A, C, 1024, BLOCK=256)
                copy_kernel[(8,)](A, C, 1024, BLOCK=128)
            ''')
        result = compile_source(source)
        self.assertTrue(result["ok"], result)
        self.assertEqual([l["constexprs"]["BLOCK"] for l in result["launches"]], [256, 128])

    def test_an_autotuned_kernel_compiles_its_first_configuration(self):
        source = HEADER + textwrap.dedent('''\
            @triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2),
                                      triton.Config({"BLOCK": 512}, num_warps=8)], key=["n"])
            @triton.jit
            def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


            def run(A, B, C, M):
                copy_kernel[lambda meta: (triton.cdiv(1024, meta["BLOCK"]),)](A, C, 1024)
            ''')
        result = compile_source(source)
        self.assertTrue(result["ok"], result)
        launch = result["launches"][0]
        self.assertEqual(launch["constexprs"]["BLOCK"], 64)
        self.assertEqual(launch["num_warps"], 2)
        self.assertEqual(launch["grid"], [16])
        self.assertEqual(launch["autotune"]["configs"], 2)

    def test_strides_and_views_reach_the_kernel(self):
        source = COPY_KERNEL + textwrap.dedent('''\


            def run(A, B, C, M):
                flat = A.view(-1)
                assert flat.shape[0] == 4096 * 5120 and B.T.stride() == (1, 5120)
                copy_kernel[(1,)](flat, C.reshape(-1), flat.numel(), BLOCK=128)
            ''')
        self.assertTrue(compile_source(source)["ok"])


class Failures(unittest.TestCase):
    def test_a_kernel_that_does_not_compile_is_placed_in_the_file(self):
        result = compile_file(os.path.join(FIXTURES, "gemm_compile_error.py"))
        self.assertFalse(result["ok"])
        self.assertEqual(result["stage"], "compile")
        self.assertIn("kernel gemm_bad, line 17: `acc = tl.dot(a, b, acc)`", result["message"])
        self.assertIn("launched from line 23", result["message"])

    def test_a_torch_operation_in_run_cannot_be_specialised(self):
        result = compile_file(os.path.join(FIXTURES, "gemm_torch_matmul.py"))
        self.assertFalse(result["ok"])
        self.assertEqual(result["stage"], "run")
        self.assertIn("copy_", result["message"])
        self.assertIn("without a GPU", result["message"])

    def test_a_run_that_launches_nothing(self):
        result = compile_source(COPY_KERNEL + "\n\ndef run(A, B, C, M):\n    pass\n")
        self.assertEqual((result["ok"], result["stage"]), (False, "no_launch"))

    def test_a_module_that_raises_on_import(self):
        result = compile_source(COPY_KERNEL + "\nraise ValueError('boom at import')\n")
        self.assertEqual((result["ok"], result["stage"]), (False, "import"))
        self.assertIn("boom at import", result["message"])

    def test_a_run_that_raises(self):
        result = compile_source(COPY_KERNEL + "\n\ndef run(A, B, C, M):\n    return 1 / 0\n")
        self.assertEqual((result["ok"], result["stage"]), (False, "run"))
        self.assertIn("ZeroDivisionError", result["message"])

    def test_a_run_that_exits_the_interpreter_is_a_run_failure(self):
        result = compile_source(COPY_KERNEL + "\n\ndef run(A, B, C, M):\n    raise SystemExit(3)\n")
        self.assertEqual((result["ok"], result["stage"]), (False, "run"))
        self.assertIn("sys.exit(3)", result["message"])

    def test_an_unknown_arch_is_a_spec_error(self):
        result = compile_file(os.path.join(FIXTURES, "gemm_clean.py"), arch="sm_80")
        self.assertEqual((result["ok"], result["stage"]), (False, "spec"))


if __name__ == "__main__":
    unittest.main()
