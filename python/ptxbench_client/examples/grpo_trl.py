"""GRPO with TRL, its reward from ptxbench (docs/client.md "Trainers"): one training step of a
tiny causal language model made from a config (no weights from a hub) on the suite's first-turn
prompts, each completion scored through `ptxbench_client.trl.reward_function` as a one-turn
rollout. A random model writes no kernels: the point is the plumbing — TRL's call, the rollouts
stored, the rewards (0 for a reply without code, None for an outage) — not learning.

    python3 grpo_trl.py http://127.0.0.1:8000 TOKENIZER_JSON [--problems gemm_n7168_k5120]

Needs torch, transformers, trl and datasets (CI runs it on the CPU: python/tests/
test_examples.py); prints one JSON line: the rewards the function returned (one per completion;
the rollouts are in the server's run store) and TRL's last log entry."""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, HERE)

from ptxbench_client import Client  # noqa: E402
from ptxbench_client.trl import reward_function  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("tokenizer_json")
    parser.add_argument("--problems", nargs="+", default=["gemm_n7168_k5120"])
    parser.add_argument("--output-dir", default="grpo_out")
    args = parser.parse_args(argv)

    import datasets
    import pyarrow
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from sft_dataset import load_tokenizer

    client = Client(args.url)
    tokenizer = load_tokenizer(args.tokenizer_json)
    # Generation needs an end token; a tokenizer.json alone names none (the anthropic one's
    # token 0 is <EOT>).
    if tokenizer.eos_token is None:
        tokenizer.eos_token = tokenizer.convert_ids_to_tokens(0)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    prompts = [client.prompt(problem) for problem in args.problems]
    # Only the task message: a tiny model's context holds no knowledge pack. The fingerprint is
    # given, as sft_dataset.load_sft's is: datasets' own fails on the pinned set (MonthDayNano).
    table = pyarrow.table({
        "prompt": [[{"role": "user", "content": p[1]["content"][:400]}] for p in prompts],
        "problem": args.problems})
    dataset = datasets.Dataset(table, fingerprint="grpo-" + "-".join(args.problems)[:48])
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=4096, pad_token_id=tokenizer.pad_token_id)
    model = LlamaForCausalLM(config)
    rewards_seen = []
    score = reward_function(client, model="grpo-tiny")

    def ptxbench_reward(prompts, completions, **columns):
        rewards = score(prompts, completions, **columns)
        rewards_seen.extend(rewards)
        return rewards

    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, reward_funcs=[ptxbench_reward],
        train_dataset=dataset,
        args=GRPOConfig(output_dir=args.output_dir, max_steps=1, per_device_train_batch_size=2,
                        num_generations=2, max_completion_length=16, logging_steps=1,
                        report_to=[], save_strategy="no", use_cpu=not torch.cuda.is_available()))
    trainer.train()
    print(json.dumps({"rewards": rewards_seen, "log": trainer.state.log_history[-1:]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
