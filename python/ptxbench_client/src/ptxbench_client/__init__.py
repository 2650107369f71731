"""Python client of the ptxbench evaluation service (`ptxbench serve`, docs/service.md), for
agents and trainers that score kernels: `Client(url, token).evaluate(problem, source)` returns
an `EvalResult`, and `default_reward(result)` turns it into a scalar, or None when no verdict
exists (a service outage is never a reward). Standard library only."""

from .client import Client, ClientError, AuthError, EvalResult
from .reward import RewardWeights, default_reward

__all__ = ["Client", "ClientError", "AuthError", "EvalResult", "RewardWeights", "default_reward"]
