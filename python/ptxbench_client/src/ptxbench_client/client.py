"""The HTTP client (docs/service.md "Endpoints"): submit, long-poll, read the verdict.

A verdict is what the service's evaluation says (status, correctness, speedup, target
instructions). Everything else — the service unreachable, slow, stopping (503), a task the
service failed (no verdict exists) — is the `infrastructure` state: a trainer must drop or
retry such a sample, never score it. A wrong token (401) and a request the service refuses
(400, 404, 413, 415) are the caller's errors and raise."""

import concurrent.futures
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

# The service's long-poll bound per request (FIBServe's); longer waits poll again.
_MAX_POLL_S = 60.0


class ClientError(Exception):
    """The service refused the request (HTTP 400, 404, 413, 415): the sentence it gave."""

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class AuthError(ClientError):
    """Missing or wrong bearer token (HTTP 401)."""


class ConflictError(ClientError):
    """The request is valid but the named thing's state refuses it (HTTP 409): a rollout that
    has ended or waits for a retry, a task without a verdict to give feedback on."""


@dataclass
class EvalResult:
    """One evaluation. `state`: "completed" (a verdict exists: read `status`), or
    "infrastructure" (no verdict: `error` says why). `status` is the trace's (PASSED,
    COMPILE_ERROR, RUNTIME_ERROR, INCORRECT_NUMERICAL, TIMEOUT, …), or None when the
    evaluation stopped after the static check (`needs_gpu` says why: a service without a
    GPU). `target_static` / `target_executed`: the target-instruction verdicts ("present",
    "absent", "not_executed", "unknown"), when there are any."""

    state: str
    status: Optional[str] = None
    correct: Optional[bool] = None
    speedup: Optional[float] = None
    target_static: Optional[str] = None
    target_executed: Optional[str] = None
    needs_gpu: str = ""
    error: str = ""
    task_id: str = ""
    feedback: Optional[str] = None  # as the agent loop renders it (evaluate(with_feedback=True))
    raw: Dict[str, Any] = field(default_factory=dict)

    @property
    def infrastructure(self) -> bool:
        return self.state == "infrastructure"


def _infrastructure(error: str, task_id: str = "") -> EvalResult:
    return EvalResult(state="infrastructure", error=error, task_id=task_id)


def result_from_task(task: Dict[str, Any]) -> EvalResult:
    """An EvalResult from a task response (GET /tasks/{id})."""
    task_id = str(task.get("task_id", ""))
    state = task.get("status")
    if state == "failed":
        return _infrastructure(task.get("error", "the service failed the task"), task_id)
    if state != "completed":
        return _infrastructure(f"the task is still {state}", task_id)
    result = task.get("result") or {}
    evaluation = (result.get("trace") or {}).get("evaluation") or {}
    extras = evaluation.get("ptxbench") or {}
    status = result.get("status")
    performance = evaluation.get("performance") or {}
    speedup = performance.get("speedup_factor")
    return EvalResult(
        state="completed",
        status=status,
        correct=None if status is None else status == "PASSED",
        speedup=float(speedup) if isinstance(speedup, (int, float)) else None,
        target_static=(extras.get("static") or {}).get("verdict"),
        target_executed=(extras.get("dynamic") or {}).get("verdict"),
        needs_gpu=task.get("needs_gpu", ""),
        task_id=task_id,
        raw=task,
    )


class Client:
    """`Client("http://host:8000", token)`; `run` names this client's fairness unit in a fleet
    (the X-Ptxbench-Run header). `request_timeout_s` bounds each HTTP request; `retries` is how
    many times a transient failure (connection refused or reset, 429, 502–504) is retried, with
    backoff, before the evaluation is an infrastructure result."""

    def __init__(self, url: str, token: Optional[str] = None, *, run: Optional[str] = None,
                 request_timeout_s: float = 30.0, retries: int = 3, backoff_s: float = 0.5):
        self.url = url.rstrip("/")
        self.token = token
        self.run = run
        self.request_timeout_s = request_timeout_s
        self.retries = retries
        self.backoff_s = backoff_s

    # --- HTTP -----------------------------------------------------------------------------
    def _request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None,
                 timeout_s: Optional[float] = None, retries: Optional[int] = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.run:
            headers["X-Ptxbench-Run"] = self.run
        request = urllib.request.Request(self.url + path, data=data, headers=headers,
                                         method=method)
        wait = self.backoff_s
        retries = self.retries if retries is None else retries
        for attempt in range(retries + 1):
            try:
                with urllib.request.urlopen(request,
                                            timeout=timeout_s or self.request_timeout_s) as reply:
                    text = reply.read().decode("utf-8")
                    return json.loads(text) if text.startswith(("{", "[")) else text
            except urllib.error.HTTPError as error:
                message = _error_sentence(error)
                if error.code == 401:
                    raise AuthError(401, message) from None
                if error.code == 409:
                    raise ConflictError(409, message) from None
                if error.code in (400, 404, 413, 415):
                    raise ClientError(error.code, message) from None
                if error.code not in (429, 502, 503, 504) or attempt == retries:
                    if error.code == 429:
                        raise _Busy(f"HTTP 429: {message}", _retry_after(error)) from None
                    raise _Outage(f"HTTP {error.code}: {message}") from None
                retry_after = _retry_after(error)
                time.sleep(retry_after if retry_after is not None else wait)
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as error:
                if attempt == retries:
                    raise _Outage(f"the service at {self.url} cannot be reached: {error}") from None
                time.sleep(wait)
            wait *= 2
        raise _Outage("unreachable")  # the loop always returns or raises

    # --- API ------------------------------------------------------------------------------
    def problems(self) -> List[Dict[str, Any]]:
        """The suite: [{"name", "description", "op_type", "suite"}]."""
        return self._request("GET", "/definitions")

    def health(self) -> Dict[str, Any]:
        return self._request("GET", "/health")

    def submit(self, problem: str, source: str, language: str = "cuda",
               options: Optional[Dict[str, Any]] = None, endpoint: str = "evaluate") -> str:
        """Queues one evaluation and returns its task id (raises _Outage when unreachable)."""
        path = "kernel.py" if language == "triton" else "kernel.cu"
        body: Dict[str, Any] = {"solution": {"definition": problem,
                                             "sources": [{"path": path, "content": source}]},
                                "language": language}
        body.update(options or {})
        return str(self._request("POST", f"/{endpoint}", body)["task_id"])

    def wait(self, task_id: str, timeout_s: float = 3600.0) -> EvalResult:
        """Long-polls the task until it finished or `timeout_s` passed."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            poll = max(0.0, min(_MAX_POLL_S, left))
            query = urllib.parse.urlencode({"timeout": f"{poll:.3f}"})
            task = self._request("GET", f"/tasks/{task_id}?{query}",
                                 timeout_s=poll + self.request_timeout_s)
            if task.get("status") in ("completed", "failed") or left <= 0:
                return result_from_task(task)

    def evaluate(self, problem: str, source: str, language: str = "cuda",
                 options: Optional[Dict[str, Any]] = None, timeout_s: float = 3600.0,
                 endpoint: str = "evaluate", with_feedback: bool = False,
                 target_speedup: Optional[float] = 1.2) -> EvalResult:
        """Submits and waits: a verdict, or an infrastructure result (never an exception for an
        outage). `options`: the request's members (docs/service.md "Evaluation request"), e.g.
        {"timeout": 60}. `endpoint`: "evaluate", "sanitize" (memcheck) or "profile" (ncu).
        `with_feedback`: also the feedback the agent loop would show a model for this
        evaluation, its closing line against `target_speedup` (None: no target)."""
        _check_text(source, "source")
        deadline = time.monotonic() + timeout_s
        try:
            task_id = self._submit_when_accepted(problem, source, language, options, endpoint,
                                                 deadline)
            result = self.wait(task_id, max(0.0, deadline - time.monotonic()))
            if with_feedback and result.state == "completed":
                result.feedback = self.feedback(task_id, source, language,
                                                target_speedup)["feedback"]
            return result
        except _Outage as outage:
            return _infrastructure(str(outage))

    def _submit_when_accepted(self, problem, source, language, options, endpoint,
                              deadline: float) -> str:
        """submit(), waiting out a full queue (429: a fleet's bound on this client's run, a batch
        larger than it) until `deadline`: backpressure, not an outage."""
        while True:
            try:
                return self.submit(problem, source, language, options, endpoint)
            except _Busy as busy:
                pause = busy.retry_after_s or self.backoff_s
                if time.monotonic() + pause >= deadline:
                    raise
                time.sleep(pause)

    def feedback(self, task_id: str, source: str, language: str = "cuda",
                 target_speedup: Optional[float] = 1.2) -> Dict[str, Any]:
        """POST /v1/feedback: {"category", "feedback", "speedup"} of a finished task, rendered
        as the agent loop renders it for `source` (the task's own source)."""
        return self._request("POST", "/v1/feedback",
                             {"task_id": task_id, "source": source, "language": language,
                              "target_speedup": target_speedup})

    def prompt(self, problem: str, variant: str = "default", arch: str = "sm_90a",
               language: str = "cuda") -> List[Dict[str, str]]:
        """The first model call's messages ([{"role", "content"}]) exactly as `ptxbench run`
        opens a trajectory: the language's system prompt around the knowledge-pack variant
        ("default": the problem kind's first; "none": no pack), then the task."""
        body = {"problem": problem, "variant": variant, "arch": arch, "language": language}
        return self._request("POST", "/v1/prompt", body)["messages"]

    # --- rollouts (docs/service.md "Rollouts"; Env in env.py wraps them) -------------------
    def create_rollout(self, problem: str, variant: str = "default", *, arch: str = "sm_90a",
                       language: str = "cuda", model: str = "policy", max_turns: int = 8,
                       target_speedup: Optional[float] = 1.2,
                       context: str = "full") -> Dict[str, Any]:
        """A new rollout: an agent-loop trajectory stored in the server's run stores."""
        body = {"problem": problem, "variant": variant, "arch": arch, "language": language,
                "model": model, "max_turns": max_turns, "target_speedup": target_speedup,
                "context": context}
        return self._request("POST", "/v1/rollouts", body)

    def rollout(self, rollout_id: str) -> Dict[str, Any]:
        return self._request("GET", f"/v1/rollouts/{urllib.parse.quote(rollout_id)}")

    def step_rollout(self, rollout_id: str, reply: str, *, seen_turns: Optional[int] = None,
                     reasoning: Optional[str] = None, finish_reason: str = "stop",
                     output_tokens: int = 0, input_tokens: int = 0,
                     timeout_s: float = 3600.0) -> Dict[str, Any]:
        """One turn: `reply` is the model's answer; the server extracts, evaluates and renders
        the feedback as the loop does. With `seen_turns` (the finished turns the caller has
        seen) a step whose answer was lost is resent safely: the server answers it again."""
        _check_text(reply, "reply")
        body: Dict[str, Any] = {"reply": reply, "finish_reason": finish_reason,
                                "output_tokens": output_tokens, "input_tokens": input_tokens}
        if reasoning is not None:
            _check_text(reasoning, "reasoning")
            body["reasoning"] = reasoning
        if seen_turns is not None:
            body["seen_turns"] = seen_turns
        return self._request("POST", f"/v1/rollouts/{urllib.parse.quote(rollout_id)}/step", body,
                             timeout_s=timeout_s, retries=self.retries if seen_turns is not None
                             else 0)

    def retry_rollout(self, rollout_id: str, timeout_s: float = 3600.0) -> Dict[str, Any]:
        """Evaluates again the reply the evaluator could not judge (`awaiting_retry`)."""
        return self._request("POST", f"/v1/rollouts/{urllib.parse.quote(rollout_id)}/retry", {},
                             timeout_s=timeout_s, retries=0)

    def close_rollout(self, rollout_id: str) -> Dict[str, Any]:
        """Ends a rollout the caller abandons (exit "cancelled")."""
        return self._request("POST", f"/v1/rollouts/{urllib.parse.quote(rollout_id)}/close", {})

    def evaluate_many(self, items: Iterable[Tuple[str, str]], language: str = "cuda",
                      options: Optional[Dict[str, Any]] = None, timeout_s: float = 3600.0,
                      concurrency: int = 16) -> Iterator[Tuple[int, EvalResult]]:
        """Evaluates (problem, source) pairs and yields (index, result) as results arrive."""
        items = list(items)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            futures = {pool.submit(self.evaluate, problem, source, language, options, timeout_s):
                       index for index, (problem, source) in enumerate(items)}
            for future in concurrent.futures.as_completed(futures):
                yield futures[future], future.result()


class _Outage(Exception):
    """The service could not answer (unreachable, 5xx, 429 past the retries)."""


class _Busy(_Outage):
    """The service's queue for this client is full (429 past the retries)."""

    def __init__(self, message: str, retry_after_s: Optional[float]):
        super().__init__(message)
        self.retry_after_s = retry_after_s


def _retry_after(error: urllib.error.HTTPError) -> Optional[float]:
    value = error.headers.get("Retry-After") if error.headers else None
    try:
        return float(value) if value else None
    except ValueError:
        return None


Outage = _Outage  # what Env catches; the Client's own calls turn it into results


def _check_text(text: Any, what: str) -> None:
    """Text that can be sent: a str of valid UTF-8 (a lone surrogate is not), before anything
    is sent."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be text (str)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{what} is not valid UTF-8: {error}") from None


def _error_sentence(error: urllib.error.HTTPError) -> str:
    try:
        return json.loads(error.read().decode("utf-8")).get("error", error.reason)
    except (ValueError, AttributeError, OSError):
        return str(error.reason)
