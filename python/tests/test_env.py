"""The multi-turn environment and the /v1 endpoints through the Python client, against a real
`ptxbench serve` on loopback (no GPU here: a kernel that builds is `static_only`, no verdict):
the first-turn prompt, Env.reset/step with the loop's feedback and ends, rewards (0 for a reply
without code or a compile error, None without a verdict or in an outage), the rollouts stored as
runs that `report` and `fixit collect` read, and the feedback of an evaluation.
Run: python3 python/tests/test_env.py PTXBENCH_BINARY (ctest: env_py)."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ptxbench_client", "src"))
sys.path.insert(0, HERE)

from ptxbench_client import Client, ClientError, ConflictError, Env, turn_reward  # noqa: E402
from serve_support import (GEMM, Serve, compile_error_kernel, fenced,  # noqa: E402
                           fill_kernel)

BINARY = os.environ.get("PTXBENCH_BINARY", "")


class EnvAgainstServe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.serve = Serve(BINARY)
        cls.client = Client(cls.serve.url)

    @classmethod
    def tearDownClass(cls):
        cls.serve.stop()

    def test_reset_opens_with_the_loops_first_prompt(self):
        env = Env(self.client, GEMM, max_turns=2)
        messages = env.reset()
        self.assertEqual([m["role"] for m in messages], ["system", "user"])
        self.assertEqual(messages, self.client.prompt(GEMM))
        self.assertIn(GEMM, messages[1]["content"])
        env.close()
        self.assertTrue(env.rollout["done"])
        self.assertEqual(env.rollout["exit"], "cancelled")

    def test_a_rollout_is_the_loops_conversation_its_rewards_and_its_end(self):
        env = Env(self.client, GEMM, max_turns=3)
        env.reset()
        messages, reward, done, info = env.step("I cannot write this one.")
        self.assertEqual(info["turn"]["category"], "extraction")
        self.assertEqual(reward, 0.0, "a reply without code is a verdict: 0")
        self.assertFalse(done)
        self.assertEqual([m["role"] for m in messages], ["system", "user", "assistant", "user"])
        self.assertEqual(messages[3]["content"], info["turn"]["feedback"])

        reply = fenced(fill_kernel("env builds"))
        messages, reward, done, info = env.step(reply)
        self.assertEqual(info["state"], "completed")
        self.assertEqual(info["turn"]["category"], "static_only")
        self.assertIsNone(reward, "built but not run (no GPU): no verdict, no reward")
        self.assertIn("Compilation succeeded", messages[-1]["content"])
        self.assertEqual(messages[-2]["content"], reply)

        messages, reward, done, info = env.step(fenced(compile_error_kernel()))
        self.assertEqual(info["turn"]["category"], "compile")
        self.assertEqual(reward, 0.0)
        self.assertIn("Please fix the issues", info["turn"]["feedback"])
        self.assertTrue(done)
        self.assertEqual(info["exit"], "turn_budget")
        self.assertEqual(len(messages), 8)
        with self.assertRaises(ConflictError):
            env.step("one more")

        # Stored as a run: the server's run store answers with the same turns, and the
        # benchmark's own commands read the folder.
        stored = self.client.rollout(env.rollout_id)
        self.assertEqual([t["category"] for t in stored["turns"]],
                         ["extraction", "static_only", "compile"])
        folder = env.rollout["run_dir"]
        report = self.serve.ptxbench("report", folder)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("policy", report.stdout)
        out = tempfile.mkdtemp(prefix="ptxbench_env_fixit_")
        collect = self.serve.ptxbench("fixit", "collect", "--out", out, folder)
        self.assertEqual(collect.returncode, 0, collect.stderr)
        with open(os.path.join(out, "fixit", "collect", "failures.jsonl"), encoding="utf-8") as f:
            failures = [json.loads(line) for line in f if line.strip()]
        self.assertTrue(any(f.get("category") == "compile" for f in failures), failures)

    def test_the_caller_errors_are_exceptions_and_an_outage_is_no_reward(self):
        with self.assertRaises(ClientError) as raised:
            Env(self.client, "no_such_problem").reset()
        self.assertEqual(raised.exception.status, 404)
        with self.assertRaises(ClientError):
            Env(self.client, GEMM, max_turns=0).reset()
        with self.assertRaises(RuntimeError):
            Env(self.client, GEMM).step("before reset")
        env = Env(self.client, GEMM)
        env.reset()
        with self.assertRaises(ValueError):
            env.step("a lone surrogate \udc80")
        with self.assertRaises(TypeError):
            env.step(b"bytes")
        env.close()

        serve = Serve(BINARY)
        try:
            env = Env(Client(serve.url, retries=1, backoff_s=0.01, request_timeout_s=2), GEMM)
            opening = env.reset()
            serve.kill()
            messages, reward, done, info = env.step(fenced(fill_kernel("outage")))
            self.assertEqual(info["state"], "infrastructure")
            self.assertIn("cannot be reached", info["error"])
            self.assertIsNone(reward, "an outage is never a reward")
            self.assertFalse(done)
            self.assertEqual(messages, opening, "the conversation is unchanged")
        finally:
            serve.stop()

    def test_an_evaluation_comes_with_the_loops_feedback(self):
        result = self.client.evaluate(GEMM, compile_error_kernel(), with_feedback=True,
                                      timeout_s=300)
        self.assertEqual(result.status, "COMPILE_ERROR")
        self.assertIn("Compilation FAILED", result.feedback)
        self.assertTrue(result.feedback.endswith(
            "Please fix the issues and provide an updated kernel.\n"))
        with self.assertRaises(ClientError) as raised:
            self.client.prompt(GEMM, variant="no-such-variant")
        self.assertEqual(raised.exception.status, 404)


class TurnReward(unittest.TestCase):
    def test_a_turns_reward_follows_the_evaluation_reward(self):
        self.assertIsNone(turn_reward({"category": "infra"}))
        self.assertIsNone(turn_reward({"category": "static_only"}))
        for failed in ("extraction", "compile", "banned_library", "runtime", "numerical",
                       "timeout"):
            self.assertEqual(turn_reward({"category": failed, "speedup": 3.0}), 0.0)
        self.assertAlmostEqual(turn_reward({"category": "correct"}), 0.2)
        self.assertAlmostEqual(
            turn_reward({"category": "correct", "target_executed": "present", "speedup": 1.0}),
            0.75)
        with self.assertRaises(ValueError):
            turn_reward({"category": "surprise"})


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BINARY = sys.argv.pop(1)
    if not BINARY:
        sys.exit("usage: test_env.py PTXBENCH_BINARY")
    unittest.main()
