"""The Python client (python/ptxbench_client) against a real `ptxbench serve` on loopback (no
GPU here: evaluations stop after the static check): problems, an evaluation's verdict, a batch,
the caller's errors, an outage as an infrastructure result, the reward, and `pip install`.
Run: python3 python/tests/test_client.py PTXBENCH_BINARY (ctest: client_py)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROJECT = os.path.join(os.path.dirname(HERE), "ptxbench_client")
sys.path.insert(0, os.path.join(PROJECT, "src"))
sys.path.insert(0, HERE)

from ptxbench_client import (AuthError, Client, ClientError, EvalResult,  # noqa: E402
                             RewardWeights, default_reward)
import serve_support  # noqa: E402
from serve_support import GEMM, fill_kernel  # noqa: E402

BINARY = os.environ.get("PTXBENCH_BINARY", "")


class Serve(serve_support.Serve):
    def __init__(self, token=None):
        super().__init__(BINARY, token)


class ClientAgainstServe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.serve = Serve()
        cls.client = Client(cls.serve.url)

    @classmethod
    def tearDownClass(cls):
        cls.serve.stop()

    def test_problems_list_the_suite(self):
        names = [p["name"] for p in self.client.problems()]
        self.assertIn(GEMM, names)

    def test_a_kernel_that_builds_stops_after_the_static_check_and_earns_no_reward(self):
        result = self.client.evaluate(GEMM, fill_kernel("client 1"), timeout_s=300)
        self.assertEqual(result.state, "completed", result.error)
        self.assertIsNone(result.status)  # no GPU here: no verdict on correctness or speed
        self.assertIn("GPU", result.needs_gpu)
        self.assertIsNone(result.correct)
        self.assertIsNone(default_reward(result), "no verdict, no reward")

    def test_a_kernel_that_does_not_compile_is_a_verdict_worth_zero(self):
        result = self.client.evaluate(GEMM, "this is not CUDA", timeout_s=300)
        self.assertEqual(result.state, "completed", result.error)
        self.assertEqual(result.status, "COMPILE_ERROR")
        self.assertFalse(result.correct)
        self.assertEqual(default_reward(result), 0.0)

    def test_a_batch_yields_every_result_once_as_it_arrives(self):
        sources = [(GEMM, fill_kernel(f"batch {i}")) for i in range(3)] + [(GEMM, "not CUDA")]
        seen = dict(self.client.evaluate_many(sources, timeout_s=300, concurrency=4))
        self.assertEqual(sorted(seen), [0, 1, 2, 3])
        self.assertEqual(seen[3].status, "COMPILE_ERROR")
        for index in range(3):
            self.assertEqual(seen[index].state, "completed", seen[index].error)

    def test_an_unknown_problem_is_the_callers_error(self):
        with self.assertRaises(ClientError) as raised:
            self.client.evaluate("no_such_problem", fill_kernel("x"))
        self.assertEqual(raised.exception.status, 404)

    def test_a_source_that_is_not_text_is_refused_before_it_is_sent(self):
        with self.assertRaises(TypeError):
            self.client.evaluate(GEMM, b"bytes")
        with self.assertRaises(ValueError):
            self.client.evaluate(GEMM, "a lone surrogate \udc80")


class ClientErrorsAndOutages(unittest.TestCase):
    def test_a_wrong_token_raises_and_the_right_one_is_served(self):
        serve = Serve(token="s3cret")
        try:
            with self.assertRaises(AuthError):
                Client(serve.url, token="wrong").problems()
            self.assertTrue(Client(serve.url, token="s3cret").problems())
        finally:
            serve.stop()

    def test_a_service_that_is_down_is_an_infrastructure_result_never_a_reward(self):
        client = Client("http://127.0.0.1:1", retries=1, backoff_s=0.01, request_timeout_s=2)
        result = client.evaluate(GEMM, fill_kernel("down"))
        self.assertTrue(result.infrastructure)
        self.assertIn("cannot be reached", result.error)
        self.assertIsNone(default_reward(result))


class FullQueueStub:
    """A loopback HTTP server speaking the service's submit/poll protocol whose queue is full
    for the first `refusals` submissions (429 with Retry-After), as a fleet's front answers a
    batch larger than a run's bound."""

    def __init__(self, refusals):
        import http.server
        import threading

        stub = self
        self.refusals = refusals
        self.submissions = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, body, headers=()):
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                stub.submissions += 1
                if stub.submissions <= stub.refusals:
                    return self._send(429, {"error": "run queue full"}, [("Retry-After", "0.05")])
                self._send(200, {"task_id": "a" * 32})

            def do_GET(self):
                self._send(200, {"task_id": "a" * 32, "status": "completed",
                                 "result": {"status": "COMPILE_ERROR", "trace": {}}})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class FullQueue(unittest.TestCase):
    def test_a_full_queue_is_waited_out_not_an_outage(self):
        stub = FullQueueStub(refusals=6)  # more than the client's retries
        try:
            result = Client(stub.url, retries=1, backoff_s=0.01).evaluate(GEMM, "x", timeout_s=30)
            self.assertEqual(result.state, "completed", result.error)
            self.assertEqual(result.status, "COMPILE_ERROR")
            self.assertEqual(stub.submissions, 7)
        finally:
            stub.stop()

    def test_past_the_deadline_a_full_queue_is_an_infrastructure_result(self):
        stub = FullQueueStub(refusals=10 ** 6)
        try:
            result = Client(stub.url, retries=0).evaluate(GEMM, "x", timeout_s=0.3)
            self.assertTrue(result.infrastructure)
            self.assertIn("429", result.error)
            self.assertIsNone(default_reward(result))
        finally:
            stub.stop()


class Reward(unittest.TestCase):
    def test_the_reward_grows_with_correctness_target_instructions_and_bounded_speed(self):
        def result(status, target=None, speedup=None):
            return EvalResult(state="completed", status=status, correct=status == "PASSED",
                              target_executed=target, speedup=speedup)

        self.assertEqual(default_reward(result("RUNTIME_ERROR")), 0.0)
        self.assertEqual(default_reward(result("INCORRECT_NUMERICAL", "present", 3.0)), 0.0)
        correct = default_reward(result("PASSED", "absent", None))
        targeted = default_reward(result("PASSED", "present", None))
        fast = default_reward(result("PASSED", "present", 1.0))
        capped = default_reward(result("PASSED", "present", 50.0))
        self.assertAlmostEqual(correct, 0.2)
        self.assertAlmostEqual(targeted, 0.5)
        self.assertAlmostEqual(fast, 0.75)
        self.assertAlmostEqual(capped, 1.0, msg="the speed term is bounded")
        self.assertAlmostEqual(
            default_reward(result("PASSED", "unknown", 2.0)), 0.7,
            msg="an unknown count never earns the target term")
        self.assertAlmostEqual(
            default_reward(result("PASSED", None, None), RewardWeights(correct=1.0)), 1.0)
        self.assertIsNone(default_reward(EvalResult(state="infrastructure", error="down")))


class Install(unittest.TestCase):
    def test_pip_installs_the_package_and_it_imports(self):
        target = tempfile.mkdtemp(prefix="ptxbench_client_pip_")
        source = os.path.join(target, "project")  # setuptools writes build files beside it
        shutil.copytree(PROJECT, source)
        target = os.path.join(target, "site")
        try:
            # The build backend scripts/setup.sh installed: no package index is reached.
            backend = os.path.join(ROOT, ".deps", "python-build")
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                            "--no-build-isolation", "--no-index", "--disable-pip-version-check",
                            "--target", target, source],
                           env=dict(os.environ, PYTHONPATH=backend), check=True)
            probe = subprocess.run(
                [sys.executable, "-c",
                 "import ptxbench_client, sys; print(ptxbench_client.__file__)"],
                env=dict(os.environ, PYTHONPATH=target), capture_output=True, text=True,
                check=True)
            self.assertTrue(probe.stdout.startswith(target), probe.stdout)
        finally:
            shutil.rmtree(os.path.dirname(target), ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BINARY = sys.argv.pop(1)
    if not BINARY:
        sys.exit("usage: test_client.py PTXBENCH_BINARY")
    unittest.main()
