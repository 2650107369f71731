"""A scalar reward from an evaluation (docs/client.md "Reward").

0 for a kernel that does not compile, crashes, hangs, is wrong or breaks a rule (every status
but PASSED); `correct` for a correct kernel; `+ target` when its target tensor-core
instructions were proven to execute (dynamic verdict "present"); `+ speed × min(speedup,
speedup_cap) / speedup_cap` for a correct, timed kernel. None when no verdict exists: an
infrastructure result, or an evaluation that stopped after the static check (no GPU) — a
trainer must not score those. The weights are the paper's metrics in order of worth:
correctness (turn correctness), target instructions (the Inst variants), then speed (Fast_p)."""

from dataclasses import dataclass
from typing import Optional

from .client import EvalResult


@dataclass(frozen=True)
class RewardWeights:
    correct: float = 0.2
    target: float = 0.3
    speed: float = 0.5
    speedup_cap: float = 2.0


def default_reward(result: EvalResult, weights: RewardWeights = RewardWeights()) -> Optional[float]:
    if result.infrastructure or result.status is None:
        return None
    if result.status != "PASSED":
        return 0.0
    reward = weights.correct
    if result.target_executed == "present":
        reward += weights.target
    if result.speedup is not None and result.speedup > 0:
        reward += weights.speed * min(result.speedup, weights.speedup_cap) / weights.speedup_cap
    return reward
