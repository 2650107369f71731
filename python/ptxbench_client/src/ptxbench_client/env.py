"""A multi-turn environment over the service's rollouts (docs/client.md "Env").

`Env(client, problem).reset()` opens a rollout and returns the messages of the first model call;
`step(reply)` sends the policy's reply and returns `(messages, reward, done, info)`. The server
runs `ptxbench run`'s own turn loop on the reply — extraction, check, evaluation, feedback, the
closing line, the turn budget and the target speedup — and stores the rollout as an ordinary
trajectory, so a trainer's rollouts and `ptxbench run` trajectories are interchangeable and
`report`, `export`, `fixit` and `kernelgen` read them.

An outage (the service unreachable or failing) is `info["state"] == "infrastructure"` with
reward None and the conversation unchanged: call `step` again with the same reply (the server
answers a step that already landed instead of taking it twice). When the evaluator itself could
not judge the reply, `info["awaiting_retry"]` is True: call `retry()` before the next reply."""

from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .client import Client, ConflictError, Outage
from .reward import RewardWeights, turn_reward

Messages = List[Dict[str, str]]
StepResult = Tuple[Messages, Optional[float], bool, Dict[str, Any]]


class Env:
    """One problem's rollouts; `reset()` starts the next one. `reward(turn)` scores a turn
    (default: turn_reward); `model` names the policy in the stored trajectories."""

    def __init__(self, client: Client, problem: str, variant: str = "default", *,
                 max_turns: int = 8, target_speedup: Optional[float] = 1.2,
                 language: str = "cuda", arch: str = "sm_90a", model: str = "policy",
                 context: str = "full",
                 reward: Callable[[Mapping[str, Any]], Optional[float]] = turn_reward,
                 step_timeout_s: float = 3600.0):
        self.client = client
        self.spec = {"problem": problem, "variant": variant, "arch": arch, "language": language,
                     "model": model, "max_turns": max_turns, "target_speedup": target_speedup,
                     "context": context}
        self.reward = reward
        self.step_timeout_s = step_timeout_s
        self.rollout: Optional[Dict[str, Any]] = None

    @property
    def rollout_id(self) -> str:
        self._require_rollout()
        return self.rollout["rollout_id"]

    @property
    def messages(self) -> Messages:
        self._require_rollout()
        return self.rollout["messages"]

    def reset(self) -> Messages:
        """Starts a new rollout; the messages the policy answers first (system, task)."""
        self.rollout = self.client.create_rollout(**self.spec)
        return self.rollout["messages"]

    def step(self, reply: str, *, reasoning: Optional[str] = None, output_tokens: int = 0,
             finish_reason: str = "stop") -> StepResult:
        self._require_rollout()
        if self.rollout["done"]:
            raise ConflictError(409, f"rollout {self.rollout_id} has ended; call reset()")
        if self.rollout["awaiting_retry"]:
            raise ConflictError(409, f"rollout {self.rollout_id}: the evaluator could not judge "
                                     "the last reply; call retry() first")
        try:
            answer = self.client.step_rollout(
                self.rollout_id, reply, seen_turns=len(self.rollout["turns"]),
                reasoning=reasoning, output_tokens=output_tokens, finish_reason=finish_reason,
                timeout_s=self.step_timeout_s)
        except Outage as outage:
            return self._outage(str(outage))
        return self._answer(answer)

    def retry(self) -> StepResult:
        """Evaluates again the reply the evaluator could not judge."""
        self._require_rollout()
        try:
            answer = self.client.retry_rollout(self.rollout_id, timeout_s=self.step_timeout_s)
        except Outage as outage:
            return self._outage(str(outage))
        return self._answer(answer)

    def close(self) -> None:
        """Ends an unfinished rollout (exit "cancelled"), so that the stored run is complete."""
        if self.rollout is not None and not self.rollout["done"]:
            self.rollout = self.client.close_rollout(self.rollout_id)

    def _answer(self, answer: Dict[str, Any]) -> StepResult:
        self.rollout = answer
        turns = answer["stepped"]
        turn = turns[-1] if turns else None
        infrastructure = turn is None or turn["category"] == "infra"
        info = {"rollout_id": answer["rollout_id"], "turn": turn,
                "state": "infrastructure" if infrastructure else "completed",
                "awaiting_retry": answer["awaiting_retry"], "exit": answer["exit"],
                "counted_turns": answer["counted_turns"],
                "error": (turn or {}).get("infra_reason") or ""}
        reward = None if infrastructure else self.reward(turn)
        return answer["messages"], reward, answer["done"], info

    def _outage(self, error: str) -> StepResult:
        info = {"rollout_id": self.rollout_id, "turn": None, "state": "infrastructure",
                "awaiting_retry": False, "exit": None,
                "counted_turns": self.rollout["counted_turns"], "error": error}
        return self.rollout["messages"], None, False, info

    def _require_rollout(self) -> None:
        if self.rollout is None:
            raise RuntimeError("call reset() first")
