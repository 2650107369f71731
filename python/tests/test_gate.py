"""Unit tests of the Triton gate: one case per rule of reference §10, and clean kernels that
pass. Run: python3 python/tests/test_gate.py (ctest: triton_gate_py)."""

import json
import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from ptxbench_triton.gate import check_source  # noqa: E402

PARAMS = ["A", "B", "C", "M"]

CLEAN = textwrap.dedent('''\
    import torch
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["M"])
    @triton.jit
    def gemm_kernel(a, b, c, M, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(a + offs, mask=offs < M)
        y = tl.softmax(x)
        acc = tl.dot(x, y)
        tl.store(c + offs, acc, mask=offs < M)


    def alloc(size, alignment, stream):
        return torch.empty(size, device="cuda", dtype=torch.int8)


    def run(A, B, C, M):
        triton.set_allocator(alloc)
        stream = torch.cuda.current_stream()
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK"]),)
        gemm_kernel[grid](A, B, C, M)
    ''')


def with_line(source, line, after="def run(A, B, C, M):\n"):
    """CLEAN with `line` inserted (indented) as the first statement of run."""
    return source.replace(after, after + "    " + line + "\n", 1)


def rules(source, params=PARAMS):
    return [f["rule"] for f in check_source(source, params)]


class CleanKernels(unittest.TestCase):
    def test_the_clean_kernel_has_no_findings(self):
        self.assertEqual(check_source(CLEAN, PARAMS), [])

    def test_from_triton_import_jit_counts_as_a_jit_kernel(self):
        source = textwrap.dedent('''\
            import triton
            from triton import jit
            import triton.language as tl
            @jit
            def k(x):
                pass
            def run(A, B, C, M):
                k[(1,)](A)
            ''')
        self.assertEqual(check_source(source, PARAMS), [])

    def test_a_lambda_allocator_may_use_torch_empty(self):
        source = with_line(CLEAN, 'triton.set_allocator(lambda n, a, s: torch.empty(n, '
                           'device="cuda", dtype=torch.int8))')
        self.assertEqual(check_source(source, PARAMS), [])

    def test_tensor_methods_that_are_not_library_calls_are_allowed(self):
        self.assertEqual(rules(with_line(CLEAN, "A = A.contiguous(); s = A.stride(0)")), [])


class EachRule(unittest.TestCase):
    def assert_rule(self, source, rule, line=None):
        findings = check_source(source, PARAMS)
        self.assertIn(rule, [f["rule"] for f in findings], findings)
        if line is not None:
            self.assertIn(line, [f["line"] for f in findings if f["rule"] == rule])

    def test_syntax_error_is_the_only_finding_and_has_its_line(self):
        findings = check_source("import triton\ndef run(A, B, C, M)\n    pass\n", PARAMS)
        self.assertEqual([f["rule"] for f in findings], ["syntax_error"])
        self.assertEqual(findings[0]["line"], 2)

    def test_cutlass_import(self):
        self.assert_rule("import cutlass\n" + CLEAN, "cutlass_import", 1)
        self.assert_rule("from cutlass.cute import nvgpu\n" + CLEAN, "cutlass_import", 1)

    def test_import_torch_as_alias(self):
        self.assert_rule("import torch as T\n" + CLEAN, "torch_alias", 1)
        self.assert_rule("import torch.nn.functional as F\n" + CLEAN, "torch_alias", 1)

    def test_from_torch_import(self):
        self.assert_rule("from torch.nn.functional import linear\n" + CLEAN,
                         "from_torch_import", 1)

    def test_missing_run(self):
        self.assert_rule(CLEAN.replace("def run(", "def launch("), "missing_run")

    def test_a_method_named_run_is_not_the_entry_point(self):
        source = CLEAN.replace("def run(", "class K:\n  def run(")
        self.assert_rule(source, "missing_run")

    def test_missing_import_triton(self):
        source = CLEAN.replace("import triton\n", "")
        self.assert_rule(source, "missing_triton_import")

    def test_rebinding_torch_or_triton(self):
        self.assert_rule(with_line(CLEAN, "torch = None"), "rebinds_module")
        self.assert_rule(with_line(CLEAN, "for triton in range(3): pass"), "rebinds_module")
        self.assert_rule("import numpy as torch\n" + CLEAN, "rebinds_module", 1)
        self.assert_rule(with_line(CLEAN, "torch.matmul = print"), "rebinds_module")
        self.assert_rule(CLEAN + "def torch():\n    pass\n", "rebinds_module")

    def test_matmul_operator(self):
        self.assert_rule(with_line(CLEAN, "C.copy_(A @ B.T)"), "matmul_operator")
        self.assert_rule(with_line(CLEAN, "A @= B"), "matmul_operator")

    def test_dunder_import_and_importlib(self):
        self.assert_rule(with_line(CLEAN, "m = __import__('torch')"), "dynamic_import")
        self.assert_rule("import importlib\n" + with_line(CLEAN, "importlib.import_module('x')"),
                         "dynamic_import")

    def test_getattr_torch(self):
        self.assert_rule(with_line(CLEAN, "f = getattr(torch, 'mat' + 'mul')"), "getattr_torch")
        self.assert_rule(with_line(CLEAN, "f = getattr(torch.nn.functional, 'linear')"),
                         "getattr_torch")

    def test_torch_calls_other_than_cuda_and_the_allocator_empty(self):
        self.assert_rule(with_line(CLEAN, "torch.matmul(A, B.T, out=C)"), "torch_call")
        self.assert_rule(with_line(CLEAN, "tmp = torch.empty_like(C)"), "torch_call")
        self.assert_rule(with_line(CLEAN, "tmp = torch.empty(4, device='cuda')"), "torch_call")
        self.assertNotIn("torch_call", rules(with_line(CLEAN, "torch.cuda.synchronize()")))

    def test_banned_method_calls(self):
        for method in ["addbmm", "addmm", "baddbmm", "bmm", "conv1d", "conv2d", "conv3d",
                       "einsum", "linear", "matmul", "mm", "scaled_dot_product_attention",
                       "softmax"]:
            with self.subTest(method=method):
                self.assert_rule(with_line(CLEAN, f"x = A.{method}(B)"), "banned_method")

    def test_no_jit_kernel(self):
        self.assert_rule(CLEAN.replace("@triton.jit\n", ""), "missing_jit_kernel")

    def test_run_with_the_wrong_parameters(self):
        findings = check_source(CLEAN.replace("def run(A, B, C, M)", "def run(A, B, C)"),
                                PARAMS)
        wrong = [f for f in findings if f["rule"] == "run_signature"]
        self.assertEqual(len(wrong), 1, findings)
        self.assertIn("`run(A, B, C)`", wrong[0]["message"])
        self.assertIn("`def run(A, B, C, M)`", wrong[0]["message"])
        self.assert_rule(CLEAN.replace("def run(A, B, C, M)", "def run(A, B, C, M, *rest)"),
                         "run_signature")
        self.assert_rule(CLEAN.replace("def run(A, B, C, M)", "def run(B, A, C, M)"),
                         "run_signature")


class CommandLine(unittest.TestCase):
    def test_prints_one_json_object_and_exits_zero_with_findings(self):
        proc = subprocess.run([sys.executable, "-m", "ptxbench_triton.gate", "-",
                               "--params", "A,B,C,M"], input=b"x = (", capture_output=True,
                              cwd=os.path.dirname(HERE), check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = json.loads(proc.stdout)
        self.assertEqual([f["rule"] for f in out["findings"]], ["syntax_error"])

    def test_an_unreadable_file_is_a_usage_error(self):
        proc = subprocess.run([sys.executable, "-m", "ptxbench_triton.gate", "/no/such.py"],
                              capture_output=True, cwd=os.path.dirname(HERE), check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("/no/such.py", proc.stderr.decode())


if __name__ == "__main__":
    unittest.main()
