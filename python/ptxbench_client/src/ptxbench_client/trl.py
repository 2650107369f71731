"""A reward function for TRL's GRPOTrainer (docs/client.md "Trainers"), standard library only:
TRL calls it with the batch's prompts, completions and dataset columns as keyword arguments and
wants one float per completion, None for a sample it must not score.

Each completion is one reply to its problem's first prompt: a one-turn rollout on the server
(the loop's extraction, evaluation and feedback; stored, so `report` and `fixit` read the
batch), scored by `reward` (turn_reward by default). An outage is None, never 0."""

import concurrent.futures
from typing import Any, Callable, List, Mapping, Optional

from .client import Client, Outage
from .reward import turn_reward


def completion_text(completion: Any) -> str:
    """A completion as TRL passes it: text, or a conversational list of messages whose last
    assistant message is the reply."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        for message in reversed(completion):
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                return str(message.get("content", ""))
    raise TypeError(f"a completion is text or a list of messages, not {type(completion).__name__}")


def reward_function(client: Client, *, problem_column: str = "problem",
                    variant: str = "default", language: str = "cuda", arch: str = "sm_90a",
                    model: str = "policy", target_speedup: Optional[float] = 1.2,
                    reward: Callable[[Mapping[str, Any]], Optional[float]] = turn_reward,
                    concurrency: int = 16, timeout_s: float = 3600.0
                    ) -> Callable[..., List[Optional[float]]]:
    """`reward_funcs=[reward_function(Client(url))]`: the dataset's `problem_column` names each
    prompt's problem."""

    def score(problem: str, completion: Any) -> Optional[float]:
        try:
            rollout = client.create_rollout(problem, variant, arch=arch, language=language,
                                            model=model, max_turns=1,
                                            target_speedup=target_speedup)
            answer = client.step_rollout(rollout["rollout_id"], completion_text(completion),
                                         seen_turns=0, timeout_s=timeout_s)
        except Outage:
            return None
        turns = answer["stepped"]
        return reward(turns[-1]) if turns else None

    def ptxbench_reward(prompts: List[Any], completions: List[Any],
                        **columns: Any) -> List[Optional[float]]:
        problems = columns.get(problem_column)
        if problems is None or len(problems) != len(completions):
            raise ValueError(f"the dataset needs a {problem_column!r} column naming each "
                             "prompt's problem")
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            return list(pool.map(score, problems, completions))

    return ptxbench_reward
