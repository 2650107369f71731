"""A random policy against `ptxbench serve` through the multi-turn Env (docs/client.md): each
episode is a rollout whose turns are replies drawn at random from a few canned ones — no code, a
kernel that does not compile, one that builds. The rollouts land in the server's run stores
(its log says where), so `ptxbench report` reads them.

    python3 random_policy.py http://127.0.0.1:8000 [--episodes 2] [--turns 3] [--seed 0]

One JSON line per step on stdout: episode, turn, category, reward, done."""

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from ptxbench_client import Client, Env  # noqa: E402

GEMM = "gemm_n7168_k5120"

_BUILDS = """```cuda
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>
// {marker}
__global__ void fill(__nv_bfloat16* C, int64_t n) {{
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) C[i] = __float2bfloat16(0.0f);
}}
void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {{
  int64_t n = M * 7168;
  fill<<<unsigned((n + 255) / 256), 256, 0, stream>>>(C, n);
}}
```"""


def replies(marker: str):
    """The policy's choices: (name, reply text)."""
    return [("no_code", "I am not sure how to write this kernel."),
            ("compile_error", "```cuda\nvoid run() { int x = ; }\n```"),
            ("builds", _BUILDS.format(marker=marker))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--problem", default=GEMM)
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--token", default=os.environ.get("PTXBENCH_SERVICE_TOKEN"))
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    env = Env(Client(args.url, args.token), args.problem, max_turns=args.turns)
    for episode in range(args.episodes):
        messages = env.reset()
        done, turn = False, 0
        while not done:
            name, reply = rng.choice(replies(f"episode {episode} turn {turn}"))
            messages, reward, done, info = env.step(reply)
            while info["awaiting_retry"]:  # the evaluator failed on this reply: judge it again
                messages, reward, done, info = env.retry()
            print(json.dumps({"episode": episode, "rollout": info["rollout_id"], "turn": turn,
                              "policy": name, "state": info["state"],
                              "category": (info["turn"] or {}).get("category"),
                              "reward": reward, "done": done, "exit": info["exit"],
                              "messages": len(messages)}), flush=True)
            turn += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
