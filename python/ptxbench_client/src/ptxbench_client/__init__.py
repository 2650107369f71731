"""Python client of the ptxbench evaluation service (`ptxbench serve`, docs/service.md), for
agents and trainers that score kernels: `Client(url, token).evaluate(problem, source)` returns
an `EvalResult`, and `default_reward(result)` turns it into a scalar, or None when no verdict
exists (a service outage is never a reward); `Env(client, problem)` is the agent loop as a
multi-turn environment (`reset`, `step`), and `ptxbench_client.trl.reward_function` a reward
for TRL's GRPOTrainer. Standard library only."""

from .client import AuthError, Client, ClientError, ConflictError, EvalResult
from .env import Env
from .reward import RewardWeights, default_reward, turn_reward

__all__ = ["Client", "ClientError", "AuthError", "ConflictError", "EvalResult", "Env",
           "RewardWeights", "default_reward", "turn_reward"]
