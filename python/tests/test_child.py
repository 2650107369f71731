"""CPU tests of the child prototype's parts that need no GPU: the PtxbenchCall mirror matches
compile/ptxbench_call.h, `run` is checked against the signature, bad calls and raising
candidates become status codes. Run: python3 python/tests/test_child.py (ctest:
triton_child_py)."""

import ctypes
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from ptxbench_triton import child  # noqa: E402


class CallRecord(unittest.TestCase):
    def test_the_mirror_has_the_c_layout(self):
        self.assertEqual(ctypes.sizeof(child.PtxbenchScalar), 8)
        self.assertEqual(ctypes.sizeof(child.PtxbenchCall), 48)
        self.assertEqual(child.PtxbenchCall.buffers.offset, 16)
        self.assertEqual(child.PtxbenchCall.stream.offset, 40)

    def test_a_call_with_the_wrong_counts_is_a_bad_call(self):
        binding = child.Binding(lambda *a: None, [("A", [4], "float32")], [], [], [])
        call = child.PtxbenchCall(version=1, num_buffers=2)
        self.assertEqual(binding.invoke(ctypes.pointer(call)), child.PTXBENCH_INVOKE_BAD_CALL)
        call = child.PtxbenchCall(version=7, num_buffers=1)
        self.assertEqual(binding.invoke(ctypes.pointer(call)), child.PTXBENCH_INVOKE_BAD_CALL)

    def test_the_c_callback_round_trips_through_ctypes(self):
        binding = child.Binding(lambda *a: None, [], [], [], [])
        fn = child.invoke_callback(binding)
        call = child.PtxbenchCall(version=1, num_buffers=1)
        self.assertEqual(fn(ctypes.pointer(call)), child.PTXBENCH_INVOKE_BAD_CALL)


class Candidate(unittest.TestCase):
    def write(self, text):
        handle = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
        handle.write(text)
        handle.close()
        self.addCleanup(os.unlink, handle.name)
        return handle.name

    def test_run_with_the_expected_parameters_loads(self):
        path = self.write("def run(A, B, C, M):\n    pass\n")
        self.assertTrue(callable(child.load_candidate(path, ["A", "B", "C", "M"])))

    def test_run_with_other_parameters_names_both(self):
        path = self.write("def run(A, B, C):\n    pass\n")
        with self.assertRaises(ValueError) as raised:
            child.load_candidate(path, ["A", "B", "C", "M"])
        self.assertIn("`run(A, B, C)` does not match `def run(A, B, C, M)`", str(raised.exception))

    def test_warm_up_stops_at_the_first_failing_call(self):
        calls = []
        status, ms = child.warm_up(lambda: calls.append(1) or (2 if len(calls) == 2 else 0), 5)
        self.assertEqual(status, 2)
        self.assertEqual(len(calls), 2)
        self.assertGreaterEqual(ms, 0)

    def test_cache_cubins_lists_only_cubins_sorted(self):
        with tempfile.TemporaryDirectory() as folder:
            os.makedirs(os.path.join(folder, "h2"))
            os.makedirs(os.path.join(folder, "h1"))
            for name in ["h2/k.cubin", "h1/k.cubin", "h1/k.ptx", "h1/k.json"]:
                open(os.path.join(folder, name), "w").close()
            self.assertEqual([os.path.relpath(p, folder) for p in child.cache_cubins(folder)],
                             ["h1/k.cubin", "h2/k.cubin"])


if __name__ == "__main__":
    unittest.main()
