"""The client's examples (python/ptxbench_client/examples/) run with small inputs against a real
`ptxbench serve` on loopback: the random policy's episodes land as runs `report` reads; the TRL
reward function scores a batch called the way TRL's GRPOTrainer calls it (text and
conversational completions, an outage as None); one GRPO trainer step of a tiny model on the CPU
scores its completions through the client and stores them as rollouts; the SFT loader turns
`fixit build`'s rows into a `datasets.Dataset` with a chat template applied (datasets and
transformers from .deps/python-trainer/, torch and trl from .deps/python-torch/, the
tokenizer.json that the anthropic package ships, from .deps/python-tokenizer/ — all installed by
scripts/setup.sh).
Run: python3 python/tests/test_examples.py PTXBENCH_BINARY (ctest: client_examples_py)."""

import contextlib
import io
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(os.path.dirname(HERE), "ptxbench_client", "examples")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ptxbench_client", "src"))
sys.path.insert(0, EXAMPLES)
sys.path.insert(0, HERE)
sys.path.append(os.path.join(ROOT, ".deps", "python-trainer"))
sys.path.append(os.path.join(ROOT, ".deps", "python-torch"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the trainer step reaches no hub

import grpo_trl  # noqa: E402
import random_policy  # noqa: E402
import sft_dataset  # noqa: E402
from ptxbench_client import Client  # noqa: E402
from ptxbench_client.trl import completion_text, reward_function  # noqa: E402
from serve_support import (GEMM, Serve, compile_error_kernel, fenced,  # noqa: E402
                           fill_kernel)

BINARY = os.environ.get("PTXBENCH_BINARY", "")
TOKENIZER = os.path.join(ROOT, ".deps", "python-tokenizer", "anthropic", "tokenizer.json")
SFT_ROWS = os.path.join(ROOT, "tests", "data", "adapt", "build_sft.jsonl")


class ExamplesAgainstServe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.serve = Serve(BINARY)

    @classmethod
    def tearDownClass(cls):
        cls.serve.stop()

    def test_the_random_policy_plays_episodes_that_land_as_runs(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = random_policy.main([self.serve.url, "--episodes", "2", "--turns", "2",
                                       "--seed", "3"])
        self.assertEqual(code, 0)
        steps = [json.loads(line) for line in out.getvalue().splitlines()]
        self.assertEqual(len(steps), 4, steps)  # no GPU: no target met, each uses its 2 turns
        self.assertEqual([s["done"] for s in steps], [False, True, False, True])
        for step in steps:
            expected = None if step["policy"] == "builds" else 0.0
            self.assertEqual(step["reward"], expected, step)
        self.assertEqual(len({s["rollout"] for s in steps}), 2)
        folders = self.serve.run_folders()
        self.assertEqual(len(folders), 1)
        report = self.serve.ptxbench("report", folders[0])
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("2 trajectories, 4 finished turns", report.stdout)

    def test_the_trl_reward_scores_a_batch_as_grpo_calls_it(self):
        reward = reward_function(Client(self.serve.url), model="grpo-test")
        completions = ["no code here",
                       [{"role": "assistant", "content": fenced(compile_error_kernel())}],
                       fenced(fill_kernel("trl builds"))]
        prompts = [[{"role": "user", "content": "task"}]] * 3
        scores = reward(prompts=prompts, completions=completions, problem=[GEMM] * 3,
                        completion_ids=[[1], [2], [3]])
        self.assertEqual(scores, [0.0, 0.0, None])
        with self.assertRaises(ValueError):
            reward(prompts=prompts, completions=completions)  # no problem column
        down = reward_function(Client("http://127.0.0.1:1", retries=0, request_timeout_s=2))
        self.assertEqual(down(prompts=prompts[:1], completions=["x"], problem=[GEMM]), [None])
        with self.assertRaises(TypeError):
            completion_text(42)


class GrpoTrainerStep(unittest.TestCase):
    """A server of its own: the step's rollouts are the only runs there."""

    def setUp(self):
        self.serve = Serve(BINARY)
        self.addCleanup(self.serve.stop)

    def test_one_grpo_step_scores_its_completions_and_stores_them_as_rollouts(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = grpo_trl.main([self.serve.url, TOKENIZER, "--output-dir",
                                  os.path.join(self.serve.dir, "grpo_out")])
        self.assertEqual(code, 0)
        result = json.loads(out.getvalue().strip().splitlines()[-1])
        # One prompt, two generations; a random model writes no code: a verdict worth 0 each.
        self.assertEqual(result["rewards"], [0.0, 0.0])
        self.assertEqual(result["log"][-1]["step"], 1)
        folders = self.serve.run_folders()
        self.assertEqual(len(folders), 1)
        report = self.serve.ptxbench("report", folders[0])
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("2 trajectories, 2 finished turns", report.stdout)


class SftLoader(unittest.TestCase):
    def test_fixit_rows_become_a_dataset_with_the_chat_template_applied(self):
        tokenizer = sft_dataset.load_tokenizer(TOKENIZER)
        dataset = sft_dataset.load_sft(SFT_ROWS, tokenizer)
        with open(SFT_ROWS, encoding="utf-8") as file:
            rows = [json.loads(line) for line in file if line.strip()]
        self.assertEqual(dataset.num_rows, len(rows))
        self.assertEqual(dataset.column_names, ["id", "kind", "prompt", "completion", "text"])
        for record, row in zip(dataset, rows):
            last = row["messages"][-1]["content"]
            self.assertEqual(record["completion"], last)
            self.assertTrue(record["prompt"].endswith("<|im_start|>assistant\n"))
            self.assertTrue(record["prompt"].startswith("<|im_start|>system\n"))
            self.assertTrue(record["text"].endswith(last + "<|im_end|>\n"))
            self.assertEqual(record["kind"], "fixit")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(sft_dataset.main([SFT_ROWS, TOKENIZER]), 0)
        summary = json.loads(out.getvalue())
        self.assertEqual(summary["rows"], len(rows))
        self.assertTrue(all(tokens > 10 for tokens in summary["tokens"]))

    def test_a_row_without_a_trained_last_message_is_refused_naming_it(self):
        path = os.path.join(self._tmp(), "bad.jsonl")
        with open(path, "w", encoding="utf-8") as file:
            file.write(json.dumps({"messages": [{"role": "user", "content": "x"},
                                                {"role": "assistant", "content": "y",
                                                 "step_loss_mask": 0}]}) + "\n")
        with self.assertRaises(ValueError) as raised:
            sft_dataset.load_sft(path, sft_dataset.load_tokenizer(TOKENIZER))
        self.assertIn("bad.jsonl:1", str(raised.exception))

    def _tmp(self):
        import tempfile
        folder = tempfile.mkdtemp(prefix="ptxbench_sft_")
        self.addCleanup(lambda: __import__("shutil").rmtree(folder, ignore_errors=True))
        return folder


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BINARY = sys.argv.pop(1)
    if not BINARY:
        sys.exit("usage: test_examples.py PTXBENCH_BINARY")
    unittest.main()
