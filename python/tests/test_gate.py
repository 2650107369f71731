"""Unit tests of the Triton gate: one case per rule of reference §10, and clean kernels that
pass. Run: python3 python/tests/test_gate.py (ctest: triton_gate_py)."""

import glob
import json
import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
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


# The line number of the first statement of CLEAN's run, where with_line inserts.
RUN_BODY = CLEAN.splitlines().index("def run(A, B, C, M):") + 2


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


class LibraryCallsInEveryForm(unittest.TestCase):
    """Issue 29 item 5: every way to reach torch's compute library (or a library the gate cannot
    follow) from the candidate is a library finding on its own line, never a pass."""

    def findings(self, lines, prefix=""):
        return check_source(prefix + with_line(CLEAN, lines), PARAMS)

    def assert_rejected(self, lines, rule, line=RUN_BODY, prefix="", words=None):
        findings = self.findings(lines, prefix)
        hits = [f for f in findings if f["rule"] == rule and f["line"] == line]
        self.assertTrue(hits, f"no {rule} on line {line}: {findings}")
        for word in words or []:
            self.assertTrue(any(word in f["message"] for f in hits), (word, hits))

    def test_an_alias_of_torch_is_rejected_and_followed(self):
        self.assert_rejected("t = torch; C.copy_(t.matmul(A, B.T))", "torch_alias",
                             words=["`t = torch`"])
        self.assert_rejected("t = torch; C.copy_(t.matmul(A, B.T))", "torch_call",
                             words=["`t.matmul(...)` is `torch.matmul(...)`"])
        self.assert_rejected("t = torch; x = t.cumsum(A, 0)", "torch_call",
                             words=["`torch.cumsum(...)`"])
        self.assert_rejected("a = torch; b = a.nn; x = b.functional.relu(A)", "torch_call",
                             words=["`torch.nn.functional.relu(...)`"])
        self.assert_rejected("(t := torch).cumsum(A, 0)", "torch_alias")
        self.assert_rejected("t = u = torch; x = u.cumsum(A, 0)", "torch_call")

    def test_an_alias_of_a_torch_function_is_rejected_and_followed(self):
        self.assert_rejected("mm = torch.mm; C.copy_(mm(A, B.T))", "torch_alias",
                             words=["`mm = torch.mm`"])
        self.assert_rejected("mm = torch.mm; C.copy_(mm(A, B.T))", "torch_call",
                             words=["`mm(...)` is `torch.mm(...)`"])
        self.assert_rejected("T = torch.Tensor; x = T.cumsum(A, 0)", "torch_call",
                             words=["`torch.Tensor.cumsum(...)`"])

    def test_an_alias_inside_a_nested_function_is_followed(self):
        lines = "def inner():\n        t = torch\n        return t.mm(A, B.T)\n    inner()"
        self.assert_rejected(lines, "torch_alias", RUN_BODY + 1)
        self.assert_rejected(lines, "torch_call", RUN_BODY + 2, words=["`torch.mm(...)`"])

    def test_imported_aliases_are_followed(self):
        self.assert_rejected("x = mm(A, B.T)", "torch_call", RUN_BODY + 1,
                             prefix="from torch import matmul as mm\n",
                             words=["`mm(...)` is `torch.matmul(...)`"])
        self.assert_rejected("x = T.cumsum(A, 0)", "torch_call", RUN_BODY + 1,
                             prefix="import torch as T\n", words=["`torch.cumsum(...)`"])
        self.assert_rejected("x = F.scaled_dot_product_attention(A, B, C)", "torch_call",
                             RUN_BODY + 1, prefix="import torch.nn.functional as F\n")
        self.assert_rejected("x = F.relu(A)", "torch_call", RUN_BODY + 1,
                             prefix="from torch.nn import functional as F\n",
                             words=["`torch.nn.functional.relu(...)`"])

    def test_an_alias_of_torch_nn_functional_is_followed(self):
        self.assert_rejected("F = torch.nn.functional; C.copy_(F.linear(A, B))", "torch_call",
                             words=["`F.linear(...)` is `torch.nn.functional.linear(...)`"])
        self.assert_rejected("F = torch.nn.functional; x = F.relu(A)", "torch_call")

    def test_torch_reached_through_another_module_is_torch(self):
        self.assert_rejected("C.copy_(torch.cuda.torch.matmul(A, B.T))", "torch_call",
                             words=["`torch.matmul(...)`"])
        self.assert_rejected("x = triton.testing.torch.cumsum(A, 0)", "torch_call")

    def test_torch_functions_used_as_values_are_rejected(self):
        self.assert_rejected("ops = [torch.matmul]", "torch_alias")
        self.assert_rejected("x = list(map(torch.mm, [A], [B]))", "torch_alias")
        self.assert_rejected("f = lambda x, y: 0\n    f(torch, 1)", "torch_alias", RUN_BODY + 1)
        self.assert_rejected("x = torch.ops.aten['mm']", "torch_alias")
        self.assert_rejected("for f in (torch.mm,): pass", "torch_alias")
        source = CLEAN + "class K:\n    mm = torch.mm\n"
        self.assertIn("torch_alias", rules(source))
        source = CLEAN.replace("def run(", "@torch.compile\ndef run(")
        self.assertIn("torch_alias", rules(source))

    def test_patching_torch_through_an_alias_rebinds_the_module(self):
        self.assert_rejected("t = torch; t.matmul = print", "rebinds_module")

    def test_rebinding_a_triton_name_loses_the_triton_exemption(self):
        self.assert_rejected("tl = A; x = tl.matmul(B)", "rebinds_module")
        self.assertIn("rebinds_module", rules("import numpy as tl\n" + CLEAN))

    def test_reflection_on_torch_or_anything_is_dynamic_access(self):
        for line in ["f = vars(torch)['matmul']", "f = torch.__dict__['mm']",
                     "t = globals()['torch']", "t = locals()['A']",
                     "i = __builtins__['__import__']", "i = __builtins__.__import__",
                     "f = A.__class__.__dict__['mm']",
                     "f = object.__getattribute__(torch, 'mm')",
                     "g = getattr; f = g(torch, 'mm')", "setattr(A, 'x', 1)",
                     "exec('C.copy_(A @ B.T)')", "x = eval('A.mm(B)')",
                     "x = compile('A', 'f', 'eval')", "m = triton.testing.sys.modules"]:
            with self.subTest(line=line):
                self.assert_rejected(line, "dynamic_access")

    def test_getattr_with_a_computed_name_cannot_be_verified(self):
        self.assert_rejected("f = getattr(A, 'mat' + 'mul')", "dynamic_access",
                             words=["dynamic attribute access the gate cannot verify"])
        self.assert_rejected("f = getattr(torch, 'mm')", "getattr_torch")
        self.assert_rejected("f = getattr(torch, 'm' + 'm')", "getattr_torch")

    def test_getattr_with_a_literal_name_is_checked_as_the_attribute(self):
        self.assert_rejected("f = getattr(A, 'matmul')", "banned_method")
        self.assert_rejected("f = getattr(A, '__matmul__')", "banned_method")
        self.assert_rejected("f = getattr(A, '__dict__')", "dynamic_access")
        self.assertEqual(rules(with_line(CLEAN, "s = getattr(A, 'stride')(0)")), [])

    def test_modules_that_reach_names_dynamically_may_not_be_imported(self):
        for module in ["import importlib", "import operator", "from operator import matmul",
                       "import sys", "import builtins", "import pickle", "import gc",
                       "import ctypes", "import inspect", "from importlib import import_module"]:
            with self.subTest(module=module):
                self.assert_rule_in(module + "\n" + CLEAN, "dynamic_import", 1)
        self.assert_rejected("m = __import__('torch')", "dynamic_import")
        self.assert_rejected("m = importlib.import_module('torch')", "dynamic_import",
                             prefix="import importlib\n", line=RUN_BODY + 1)

    def assert_rule_in(self, source, rule, line):
        findings = check_source(source, PARAMS)
        self.assertIn((rule, line), [(f["rule"], f["line"]) for f in findings], findings)

    def test_dunder_operators_and_method_forms_are_banned_methods(self):
        for line in ["C.copy_(A.__matmul__(B.T))", "C.copy_(B.T.__rmatmul__(A))",
                     "A.__imatmul__(B)", "C.copy_(A.mm(B.T))", "C.copy_(A.matmul(B.T))",
                     "x = A.bmm(B)", "f = A.matmul; C.copy_(f(B.T))", "C.addmm_(A, B.T)",
                     "x = A.tensordot(B)", "x = A.mv(B)"]:
            with self.subTest(line=line):
                self.assert_rejected(line, "banned_method")
        self.assert_rejected("x = operator.matmul(A, B.T)", "banned_method",
                             prefix="import operator\n", line=RUN_BODY + 1)

    def test_torch_library_functions_are_torch_calls(self):
        for line in ["C.copy_(torch.Tensor.matmul(A, B.T))", "x = torch.einsum('ik,jk', A, B)",
                     "x = torch.baddbmm(C, A, B)", "x = torch.addmm(C, A, B.T)",
                     "x = torch.nn.functional.linear(A, B)",
                     "x = torch.nn.functional.scaled_dot_product_attention(A, B, C)",
                     "C.copy_(A @ B.T) if False else torch.mm(A, B.T)"]:
            with self.subTest(line=line):
                self.assert_rejected(line, "torch_call")

    def test_operator_overloads_are_torch_calls_naming_the_overload(self):
        for call in ["torch.ops.aten.mm.out", "torch.ops.aten.mm.default", "torch.ops.aten.mm",
                     "torch._C._nn.linear", "torch._C._VariableFunctions.mm"]:
            with self.subTest(call=call):
                self.assert_rejected(f"x = {call}(A, B.T)", "torch_call", words=[f"`{call}(...)`"])
        self.assert_rejected("aten = torch.ops.aten; x = aten.mm.default(A, B.T)", "torch_call",
                             words=["`aten.mm.default(...)` is `torch.ops.aten.mm.default(...)`"])

    def test_every_finding_is_a_library_rule(self):
        library = {"cutlass_import", "torch_alias", "from_torch_import", "rebinds_module",
                   "matmul_operator", "dynamic_import", "dynamic_access", "getattr_torch",
                   "torch_call", "banned_method"}
        for line in ["t = torch; t.matmul(A, B)", "f = vars(torch)['mm']", "A.__matmul__(B)",
                     "torch.ops.aten.mm.default(A, B)", "getattr(A, 'm' + 'm')(B)"]:
            with self.subTest(line=line):
                self.assertTrue(set(rules(with_line(CLEAN, line))) <= library)


class FixturesAndExamples(unittest.TestCase):
    """The gate's verdict on the tree's Triton files: expert kernels and the runtime fixtures pass
    (their GPU tests need them to reach the child); the library fixtures are rejected."""

    def read(self, *parts):
        with open(os.path.join(ROOT, *parts), "rb") as handle:
            return handle.read()

    def test_the_expert_kernels_pass(self):
        paths = glob.glob(os.path.join(ROOT, "examples", "*", "*.py"))
        self.assertTrue(paths)
        for path in paths:
            with self.subTest(path=path), open(path, "rb") as handle:
                self.assertEqual(check_source(handle.read()), [])

    def test_the_runtime_fixtures_and_the_clean_gemms_pass(self):
        for parts in [("tests", "kernels", "triton", name) for name in
                      ["raises.py", "raises_second_call.py", "hangs_in_autotuning.py",
                       "torch_op.py", "other_stream.py", "late_work.py", "mutates_inputs.py",
                       "out_of_bounds_write.py"]] + \
                     [("tests", "data", "compile", "triton", name) for name in
                      ["gemm_clean.py", "gemm_compile_error.py", "gemm_cuda_event.py",
                       "gemm_persistent_tma.py", "gemm_simt_no_dot.py"]]:
            with self.subTest(file=parts[-1]):
                self.assertEqual(check_source(self.read(*parts), PARAMS), [])

    def test_the_library_fixtures_are_rejected_on_their_line(self):
        expected = {"alias_matmul.py": {("torch_alias", 18), ("torch_call", 19)},
                    "dunder_matmul.py": {("banned_method", 18)},
                    "aten_overload.py": {("torch_call", 18)}}
        for name, findings in expected.items():
            with self.subTest(file=name):
                got = check_source(self.read("tests", "kernels", "triton", name), PARAMS)
                self.assertEqual({(f["rule"], f["line"]) for f in got}, findings, got)


class NeverATraceback(unittest.TestCase):
    def test_deep_nesting_that_parses_is_checked(self):
        deep = "x = " + " + ".join(["M"] * 2500)
        self.assertEqual(rules(with_line(CLEAN, deep)), [])
        deep = "x = " + " + ".join(["M"] * 2500) + " + torch.mm(A, B)"
        self.assertIn("torch_call", rules(with_line(CLEAN, deep)))

    def test_nesting_deeper_than_python_parses_is_a_syntax_finding(self):
        deep = "x = " + " + ".join(["M"] * 5000)
        findings = check_source(with_line(CLEAN, deep), PARAMS)
        self.assertEqual([f["rule"] for f in findings], ["syntax_error"], findings)
        self.assertIn("nests deeper", findings[0]["message"])

    def test_the_command_line_answers_json_for_every_form(self):
        deep = "x = " + "+".join(["M"] * 2500)
        deeper = "x = " + "+".join(["M"] * 5000)
        for line, expected in [("t = torch; t.matmul(A, B)", {"torch_alias", "torch_call"}),
                               ("f = vars(torch)['matmul']", {"dynamic_access"}),
                               ("getattr(torch, 'm' + 'm')", {"getattr_torch"}),
                               ("A.__rmatmul__(B)", {"banned_method"}),
                               (deep, set()), (deeper, {"syntax_error"})]:
            with self.subTest(line=line[:40]):
                proc = subprocess.run([sys.executable, "-m", "ptxbench_triton.gate", "-",
                                       "--params", "A,B,C,M"],
                                      input=with_line(CLEAN, line).encode(),
                                      capture_output=True, cwd=os.path.dirname(HERE), check=False)
                self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
                self.assertEqual(proc.stderr, b"")
                found = {f["rule"] for f in json.loads(proc.stdout)["findings"]}
                self.assertEqual(found, expected)

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
