"""A scalar reward from an evaluation (docs/client.md "Reward").

0 for a kernel that does not compile, crashes, hangs, is wrong or breaks a rule (every status
but PASSED); `correct` for a correct kernel; `+ target` when its target tensor-core
instructions were proven to execute (dynamic verdict "present"); `+ speed × min(speedup,
speedup_cap) / speedup_cap` for a correct, timed kernel. None when no verdict exists: an
infrastructure result, or an evaluation that stopped after the static check (no GPU) — a
trainer must not score those. The weights are the paper's metrics in order of worth:
correctness (turn correctness), target instructions (the Inst variants), then speed (Fast_p)."""

from dataclasses import dataclass
from typing import Any, Mapping, Optional

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


# The categories of a turn that are a verdict against the kernel (reward 0): it has no code, does
# not build, uses a banned library, crashes, is wrong or hangs.
_FAILED_CATEGORIES = frozenset(
    {"extraction", "compile", "banned_library", "runtime", "numerical", "timeout"})


def turn_reward(turn: Mapping[str, Any],
                weights: RewardWeights = RewardWeights()) -> Optional[float]:
    """The reward of one rollout turn (a "stepped" entry of a rollout answer; docs/client.md):
    the table of default_reward on the turn's verdict. A reply without code is a verdict (0);
    an infra turn (the evaluator failed) and a static_only one (a server without a GPU) are
    none (None)."""
    category = turn.get("category")
    if category in ("infra", "static_only") or category is None:
        return None
    if category in _FAILED_CATEGORIES:
        return 0.0
    if category != "correct":
        raise ValueError(f"unknown turn category {category!r}")
    reward = weights.correct
    if turn.get("target_executed") == "present":
        reward += weights.target
    speedup = turn.get("speedup")
    if isinstance(speedup, (int, float)) and speedup > 0:
        reward += weights.speed * min(speedup, weights.speedup_cap) / weights.speedup_cap
    return reward
