"""GRPO with TRL, its reward from ptxbench (docs/client.md "Trainers"): one training step of a
tiny causal language model made from a config (no weights from a hub) on the suite's first-turn
prompts, each completion scored through `ptxbench_client.trl.reward_function` as a one-turn
rollout. A random model writes no kernels: the point is the plumbing — TRL's call, the rollouts
stored, the rewards (0 for a reply without code, None for an outage) — not learning.

    python3 grpo_trl.py http://127.0.0.1:8000 TOKENIZER_JSON [--problems gemm_n7168_k5120]

Needs torch, transformers, trl and datasets (the GPU machine's Python has torch); prints one
JSON line: the step's rewards as TRL logged them and the rollouts the server stored."""

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
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from sft_dataset import load_tokenizer

    client = Client(args.url)
    tokenizer = load_tokenizer(args.tokenizer_json)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.convert_ids_to_tokens(0)
    prompts = [client.prompt(problem) for problem in args.problems]
    # Only the task message: a tiny model's context holds no knowledge pack.
    dataset = datasets.Dataset.from_dict({
        "prompt": [[{"role": "user", "content": p[1]["content"][:400]}] for p in prompts],
        "problem": args.problems})
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
