"""LLM backends: one interface, one registry, failures recorded per sample.

A backend turns a batch of chat prompts into a list of :class:`Generation`, in input order::

    >>> from safebeal.planners.backends import BACKENDS
    >>> mock = BACKENDS.create("mock")
    >>> backend = BACKENDS.create("openai:model=gpt-4o,concurrency=8")   # doctest: +SKIP
    >>> backend = BACKENDS.create("hf:/models/llama-3-8b-instruct")      # doctest: +SKIP

Two kinds of failure are kept apart:

* configuration errors (missing API key, missing optional package, nonexistent model path) raise
  :class:`BackendError` when the backend is *constructed*, before any run starts;
* per-sample failures (timeouts, rate limits, server errors, a refused request) never raise and are
  never dropped: the sample comes back as a ``Generation`` with ``text=None`` and ``error`` set to
  the error type and message (secrets redacted), with the number of attempts made.

Heavy dependencies are imported lazily: ``openai`` (the ``[openai]`` extra), ``torch`` and
``transformers`` (``[train]``), ``vllm`` (``[vllm]``). See ``docs/bench.md``.
"""

from __future__ import annotations

import abc
import email.utils
import math
import os
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import timezone
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from safebeal.errors import SafebealError
from safebeal.jsonl import iter_jsonl
from safebeal.registry import Registry

Message = Dict[str, str]
Prompt = List[Message]
ROLES = ("system", "user", "assistant")


class BackendError(SafebealError):
    """A backend cannot be created or used as configured (raised before any run starts)."""


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass
class Generation:
    """One sample's outcome. Exactly one of ``text`` / ``error`` is set."""

    text: Optional[str]
    error: Optional[str] = None
    latency_s: float = 0.0
    attempts: int = 1
    usage: Optional[Dict[str, int]] = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------------------------
# Errors, redaction, classification
# --------------------------------------------------------------------------------------------


class StatusError(Exception):
    """An HTTP-style failure with a status code (used by the mock backend and by tests).

    ``retry_after`` (seconds) plays the role of a ``Retry-After`` header.
    """

    def __init__(self, status_code: int, message: str = "", retry_after: Optional[float] = None):
        super().__init__(message or f"HTTP {status_code}")
        self.status_code = status_code
        self.retry_after = retry_after


# Exception class names (anywhere in the MRO) that mean "the request may succeed if repeated".
# Matching by name keeps this module free of imports of openai/httpx.
_TRANSIENT_NAMES = frozenset(
    {"APIConnectionError", "APITimeoutError", "TimeoutException", "NetworkError", "RemoteProtocolError"}
)
_RETRY_STATUSES = frozenset({408, 429})
_MAX_MESSAGE = 500
_KEY_PATTERN = re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_\-]{8,}")


@dataclass(frozen=True)
class ErrorInfo:
    retryable: bool
    status: Optional[int] = None
    retry_after: Optional[float] = None


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date; None if unusable."""
    if value is None:
        return None
    value = str(value).strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        now = time.time() if now is None else now
        seconds = when.timestamp() - now
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def _header_retry_after(exc: BaseException) -> Optional[float]:
    explicit = getattr(exc, "retry_after", None)
    if isinstance(explicit, (int, float)):
        return max(0.0, float(explicit))
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            parsed = parse_retry_after(ms)
            if parsed is not None:
                return parsed / 1000.0
        return parse_retry_after(headers.get("retry-after"))
    except Exception:  # odd header container: ignore rather than fail the sample
        return None


def classify_error(exc: BaseException) -> ErrorInfo:
    """Decide whether ``exc`` is worth retrying.

    Retried: timeouts and connection errors (builtin or the openai client's), HTTP 408, 429 and 5xx.
    Not retried: every other HTTP status (400, 401, 403, 404, 422, ...) and all other exceptions.
    """
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        retryable = status in _RETRY_STATUSES or status >= 500
        return ErrorInfo(retryable, status, _header_retry_after(exc) if retryable else None)
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return ErrorInfo(True)
    if any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__):
        return ErrorInfo(True)
    return ErrorInfo(False)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove the given secrets and anything shaped like an API key (``sk-...``) from ``text``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEY_PATTERN.sub("***", text)


def describe_error(exc: BaseException, secrets: Iterable[str] = (), hint: str = "") -> str:
    """``"<Type> (HTTP <status>): <message>"``, truncated, secrets removed."""
    status = getattr(exc, "status_code", None)
    head = type(exc).__name__ + (f" (HTTP {status})" if isinstance(status, int) else "")
    message = str(exc) or repr(exc)
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + "..."
    text = f"{head}: {message}"
    if hint:
        text += f" [{hint}]"
    return redact(text, secrets)


# --------------------------------------------------------------------------------------------
# Retry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter.

    The delay before retry ``k`` (k = 0 for the first retry) is
    ``min(max_delay, base_delay * multiplier**k)``, then scaled by a uniform factor in
    ``[1 - jitter, 1]`` (``jitter=0`` gives exact delays). A server's ``Retry-After`` replaces the
    computed delay (no jitter) but is still capped at ``max_delay``.
    """

    max_retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise BackendError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise BackendError("base_delay and max_delay must be >= 0")
        if self.multiplier < 1:
            raise BackendError(f"multiplier must be >= 1, got {self.multiplier}")
        if not 0 <= self.jitter <= 1:
            raise BackendError(f"jitter must be in [0, 1], got {self.jitter}")

    def backoff(self, retry: int, rng: Optional[random.Random] = None) -> float:
        """Delay before retry number ``retry`` (0-based), ignoring Retry-After."""
        try:
            raw = self.base_delay * self.multiplier**retry
        except OverflowError:
            raw = math.inf if self.base_delay > 0 else 0.0
        delay = min(self.max_delay, raw)
        if self.jitter:
            u = (rng or random).random()
            delay *= 1.0 - self.jitter * u
        return delay

    def delay(self, retry: int, info: ErrorInfo, rng: Optional[random.Random] = None) -> float:
        if info.retry_after is not None:
            return min(self.max_delay, info.retry_after)
        return self.backoff(retry, rng)


@dataclass
class RetryResult:
    """What :func:`retry_call` did: the value or the last exception, attempts and waits."""

    value: Any = None
    error: Optional[BaseException] = None
    attempts: int = 0
    delays: List[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


def retry_call(
    fn: Callable[[], Any],
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    *,
    classify: Callable[[BaseException], ErrorInfo] = classify_error,
    rng: Optional[random.Random] = None,
) -> RetryResult:
    """Call ``fn()`` until it succeeds, fails with a non-retryable error, or retries run out.

    Never raises for an ``Exception`` from ``fn`` (it is returned in ``RetryResult.error``);
    ``KeyboardInterrupt`` and other ``BaseException`` propagate. At most ``policy.max_retries + 1``
    attempts are made; ``sleep`` is called between attempts with the delay from the policy.
    """
    result = RetryResult()
    while True:
        result.attempts += 1
        try:
            result.value = fn()
            result.error = None
            return result
        except Exception as exc:  # noqa: BLE001 - recorded, not swallowed
            result.error = exc
            info = classify(exc)
            retries_done = result.attempts - 1
            if not info.retryable or retries_done >= policy.max_retries:
                return result
            wait = policy.delay(retries_done, info, rng)
            result.delays.append(wait)
            if wait > 0:
                sleep(wait)


# --------------------------------------------------------------------------------------------
# Base class
# --------------------------------------------------------------------------------------------


def normalize_prompt(prompt: Union[str, Sequence[Mapping[str, Any]]]) -> Prompt:
    """Validate a chat prompt; a bare string becomes a single user message."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    if not isinstance(prompt, (list, tuple)) or not prompt:
        raise BackendError(f"a prompt must be a non-empty list of chat messages, got {type(prompt).__name__}")
    out: Prompt = []
    for i, msg in enumerate(prompt):
        if not isinstance(msg, Mapping) or msg.get("role") not in ROLES or not isinstance(msg.get("content"), str):
            raise BackendError(
                f"message {i} must be {{'role': one of {ROLES}, 'content': str}}, got {msg!r:.200}"
            )
        out.append({"role": msg["role"], "content": msg["content"]})
    return out


def render_plain(prompt: Prompt) -> str:
    """Prompt as text for models without a chat template: ``Role: content`` blocks, then ``Assistant:``."""
    parts = [f"{m['role'].capitalize()}: {m['content']}" for m in prompt]
    return "\n\n".join(parts) + "\n\nAssistant:"


def render_for_tokenizer(tokenizer: Any, prompt: Union[str, Sequence[Mapping[str, Any]]]) -> str:
    """The prompt text a local model sees: its chat template if the tokenizer has one, else
    :func:`render_plain`. Training (``safebeal.align``) renders prompts with this same function, so a trained
    model sees at benchmark time exactly what it saw in training."""
    msgs = normalize_prompt(prompt)
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    return render_plain(msgs)


_TOKEN_ALIASES = ("max_tokens", "max_new_tokens")


def _max_tokens(kwargs: Dict[str, Any], default: Optional[int]) -> Optional[int]:
    """``max_tokens`` and ``max_new_tokens`` are accepted by every backend and mean the same."""
    given = [kwargs.pop(k) for k in _TOKEN_ALIASES if k in kwargs]
    if len(given) == 2 and given[0] != given[1]:
        raise BackendError("max_tokens and max_new_tokens disagree")
    return given[0] if given else default


class Backend(abc.ABC):
    """A text generator for chat prompts."""

    name: str = "backend"

    @abc.abstractmethod
    def config(self) -> Dict[str, Any]:
        """The arguments this backend was created with, secrets removed (JSON-serialisable)."""

    @abc.abstractmethod
    def _generate(self, prompts: List[Prompt], **gen_kwargs: Any) -> List[Generation]:
        """Generate for validated prompts; must return one Generation per prompt, in order."""

    def generate(self, prompts: Sequence[Union[str, Prompt]], **gen_kwargs: Any) -> List[Generation]:
        """One :class:`Generation` per prompt, in order. Per-sample failures are recorded, not raised."""
        if isinstance(prompts, str) or (prompts and isinstance(prompts[0], Mapping)):
            raise BackendError("generate() takes a list of prompts; wrap a single prompt in a list")
        checked = [normalize_prompt(p) for p in prompts]
        if not checked:
            return []
        out = self._generate(checked, **gen_kwargs)
        if len(out) != len(checked):  # a bug in a backend, not a sample failure
            raise BackendError(f"{self.name} backend returned {len(out)} results for {len(checked)} prompts")
        return out

    def spec(self) -> str:
        """A spec string that re-creates this backend (scalar config values only)."""
        items = [f"{k}={v}" for k, v in self.config().items() if isinstance(v, (str, int, float, bool))]
        return self.name + (":" + ",".join(items) if items else "")

    def close(self) -> None:
        """Release resources (clients, models). Safe to call more than once."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec()}>"


BACKENDS: Registry[Backend] = Registry[Backend]("backend")


def _model_arg(model: Optional[str], arg: Optional[str], backend: str) -> str:
    if model is not None and arg is not None and str(model) != str(arg):
        raise BackendError(f"{backend}: give the model either positionally or as model=, not both")
    chosen = model if model is not None else arg
    if chosen is None or str(chosen).strip() == "":
        raise BackendError(f"{backend}: no model given (use '{backend}:model=...')")
    return str(chosen)


def _policy(max_retries: int, base_delay: float, max_delay: float, jitter: float) -> RetryPolicy:
    return RetryPolicy(max_retries=int(max_retries), base_delay=float(base_delay),
                       max_delay=float(max_delay), jitter=float(jitter))


# --------------------------------------------------------------------------------------------
# mock
# --------------------------------------------------------------------------------------------

_FAILURE_KINDS: Dict[str, Callable[[], Exception]] = {
    "timeout": lambda: TimeoutError("scripted timeout"),
    "connection": lambda: ConnectionError("scripted connection error"),
    "rate_limit": lambda: StatusError(429, "scripted rate limit"),
    "server": lambda: StatusError(500, "scripted server error"),
    "auth": lambda: StatusError(401, "scripted authentication error"),
    "bad_request": lambda: StatusError(400, "scripted bad request"),
}


class MockFailure:
    """A scripted response that fails ``times`` times (``None``: always), then returns ``text``.

    ``error`` is a kind (``timeout``, ``connection``, ``rate_limit``, ``server``, ``auth``,
    ``bad_request``), an exception instance, or an exception class. The counter is shared by every
    prompt that receives this object, so ``MockFailure("timeout", times=2, text="ok")`` fails the
    first two attempts overall and then succeeds.
    """

    def __init__(self, error: Union[str, BaseException, type] = "timeout", times: Optional[int] = None,
                 text: Optional[str] = None):
        if isinstance(error, str) and error not in _FAILURE_KINDS:
            raise BackendError(f"unknown mock failure kind {error!r}; known: {', '.join(_FAILURE_KINDS)}")
        if times is None and text is not None:
            raise BackendError("MockFailure: text is only reachable with a finite number of failures")
        self.error = error
        self.times = times
        self.text = text
        self.calls = 0
        self._lock = threading.Lock()

    def _exception(self) -> BaseException:
        if isinstance(self.error, str):
            return _FAILURE_KINDS[self.error]()
        if isinstance(self.error, type):
            return self.error("scripted failure")
        return self.error

    def __call__(self) -> str:
        with self._lock:
            self.calls += 1
            n = self.calls
        if self.times is None or n <= self.times:
            raise self._exception()
        return self.text if self.text is not None else ""

    def __repr__(self) -> str:
        return f"MockFailure({self.error!r}, times={self.times!r}, text={self.text!r})"


MockResponse = Union[str, MockFailure]


def _prompt_text(prompt: Prompt) -> str:
    return "\n".join(m["content"] for m in prompt)


def _load_mock_file(path: Path) -> Union[List[MockResponse], Dict[str, MockResponse]]:
    """Lines: a JSON string, ``{"text": ...}``, ``{"fail": kind, "times": N, "text": ...}``;
    any of the object forms may carry ``"match": substring`` (then every line must)."""
    if not path.is_file():
        raise BackendError(f"mock outputs file not found: {path}")
    items: List[tuple] = []
    for where, obj in iter_jsonl(path, BackendError, objects_only=False):
        if isinstance(obj, str):
            items.append((None, obj))
            continue
        if not isinstance(obj, dict):
            raise BackendError(f"{where}: expected a JSON string or object")
        unknown = set(obj) - {"text", "fail", "times", "match"}
        if unknown:
            raise BackendError(f"{where}: unknown keys {sorted(unknown)}")
        if "fail" in obj:
            response: MockResponse = MockFailure(obj["fail"], obj.get("times"), obj.get("text"))
        elif isinstance(obj.get("text"), str):
            response = obj["text"]
        else:
            raise BackendError(f"{where}: needs a string 'text' or a 'fail' kind")
        items.append((obj.get("match"), response))
    if not items:
        raise BackendError(f"mock outputs file is empty: {path}")
    matched = [m is not None for m, _ in items]
    if any(matched) and not all(matched):
        raise BackendError(f"{path}: either every line has 'match' or none does")
    if all(matched):
        return {str(m): r for m, r in items}
    return [r for _, r in items]


@BACKENDS.register("mock", help="scripted outputs for tests (mock:outputs=file.jsonl)")
class MockBackend(Backend):
    """Scripted, deterministic backend for tests and dry runs.

    ``responses`` is one of:

    * a list: the n-th prompt seen by this backend (across calls) gets ``responses[n % len]``;
    * a dict: the first key (in order) that is a substring of the prompt's text wins, else ``default``;
    * a callable ``f(prompt) -> str | MockFailure``.

    A response may be a :class:`MockFailure` to script errors; failures go through the same
    :func:`retry_call` as real backends (``max_retries``; delays default to 0, so no real sleeping).
    With no responses at all, the backend echoes the last message.
    """

    name = "mock"

    def __init__(
        self,
        responses: Union[None, Sequence[MockResponse], Mapping[str, MockResponse], Callable[[Prompt], Any]] = None,
        outputs: Optional[str] = None,
        default: Optional[str] = None,
        max_retries: int = 0,
        base_delay: float = 0.0,
        max_delay: float = 0.0,
        jitter: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
        arg: Optional[str] = None,
    ):
        if arg is not None:
            if outputs is not None:
                raise BackendError("mock: give the outputs file either positionally or as outputs=, not both")
            outputs = arg
        if responses is not None and outputs is not None:
            raise BackendError("mock: give either responses or outputs, not both")
        self._outputs = outputs
        if outputs is not None:
            responses = _load_mock_file(Path(outputs))
        if isinstance(responses, (str, bytes)):
            raise BackendError("mock: responses must be a list, dict or callable, not a string")
        if isinstance(responses, Sequence) and not responses:
            raise BackendError("mock: responses list is empty")
        self._responses = list(responses) if isinstance(responses, Sequence) else responses
        self.default = default
        self.policy = _policy(max_retries, base_delay, max_delay, jitter)
        self._sleep = sleep
        self._counter = 0
        self._lock = threading.Lock()
        self.calls: List[Dict[str, Any]] = []  # every generate() call: prompts and gen kwargs

    def config(self) -> Dict[str, Any]:
        if self._outputs is not None:
            source: Dict[str, Any] = {"outputs": str(self._outputs)}
        elif self._responses is None:
            source = {"responses": "echo"}
        elif callable(self._responses):
            source = {"responses": f"callable {getattr(self._responses, '__name__', '?')}"}
        else:
            source = {"responses": f"{type(self._responses).__name__} of {len(self._responses)}"}
        return {**source, "default": self.default, "max_retries": self.policy.max_retries,
                "base_delay": self.policy.base_delay, "max_delay": self.policy.max_delay,
                "jitter": self.policy.jitter}

    def spec(self) -> str:
        """Re-creatable only for ``outputs=`` files; in-memory scripts are described in ``config()``."""
        cfg = {k: v for k, v in self.config().items() if k != "responses"}
        items = [f"{k}={v}" for k, v in cfg.items() if isinstance(v, (str, int, float, bool))]
        return self.name + (":" + ",".join(items) if items else "")

    def _pick(self, prompt: Prompt) -> Any:
        r = self._responses
        if r is None:
            return prompt[-1]["content"]
        if isinstance(r, list):
            with self._lock:
                i = self._counter
                self._counter += 1
            return r[i % len(r)]
        text = _prompt_text(prompt)
        for key, value in r.items():
            if key in text:
                return value
        if self.default is not None:
            return self.default
        raise LookupError(f"no scripted response matches the prompt (keys: {list(r)[:5]})")

    def _one(self, prompt: Prompt) -> Generation:
        start = time.perf_counter()
        scripted = self._responses
        if callable(scripted) and not isinstance(scripted, MockFailure):
            picked: Any = lambda: scripted(prompt)  # noqa: E731 - called on every attempt
        else:
            try:
                picked = self._pick(prompt)
            except Exception as exc:  # noqa: BLE001 - a scripting mistake is a recorded failure too
                return Generation(None, describe_error(exc), time.perf_counter() - start, 1)

        def call() -> str:
            value = picked() if callable(picked) else picked
            if isinstance(value, MockFailure):
                value = value()
            if not isinstance(value, str):
                raise TypeError(f"mock response must be a string, got {type(value).__name__}")
            return value

        res = retry_call(call, self.policy, self._sleep)
        latency = time.perf_counter() - start
        if res.ok:
            return Generation(res.value, None, latency, res.attempts)
        return Generation(None, describe_error(res.error), latency, res.attempts)

    def _generate(self, prompts: List[Prompt], **gen_kwargs: Any) -> List[Generation]:
        self.calls.append({"prompts": prompts, "kwargs": dict(gen_kwargs)})
        return [self._one(p) for p in prompts]


# --------------------------------------------------------------------------------------------
# openai (any OpenAI-compatible endpoint)
# --------------------------------------------------------------------------------------------

_OPENAI_PARAMS = ("temperature", "top_p", "seed", "stop", "presence_penalty", "frequency_penalty")


@BACKENDS.register("openai", help="any OpenAI-compatible chat endpoint (openai:model=gpt-4o,base_url=...)")
class OpenAIBackend(Backend):
    """Chat completions from an OpenAI-compatible server (OpenAI, vLLM serve, llama.cpp, ...).

    The key is read from the environment variable named by ``api_key_env`` (default
    ``OPENAI_API_KEY``) at construction; a missing or empty variable is a :class:`BackendError`.
    For servers that need no key, pass ``api_key_env=none``: the dummy key ``EMPTY`` is sent.

    Requests run on a thread pool of ``concurrency`` workers; each one is retried by
    :func:`retry_call` (the client's own retries are disabled so attempts are counted here).
    """

    name = "openai"

    def __init__(
        self,
        model: Optional[str] = None,
        base_url: Optional[str] = None,
        api_key_env: Optional[str] = "OPENAI_API_KEY",
        concurrency: int = 4,
        max_retries: int = 5,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
        jitter: float = 0.5,
        timeout: float = 60.0,
        temperature: Optional[float] = 0.0,
        max_tokens: Optional[int] = None,
        seed: Optional[int] = None,
        sleep: Callable[[float], None] = time.sleep,
        arg: Optional[str] = None,
    ):
        self.model = _model_arg(model, arg, "openai")
        if int(concurrency) < 1:
            raise BackendError(f"openai: concurrency must be >= 1, got {concurrency}")
        if float(timeout) <= 0:
            raise BackendError(f"openai: timeout must be > 0, got {timeout}")
        self.base_url = None if base_url is None else str(base_url)
        self.api_key_env = None if api_key_env is None or str(api_key_env).lower() == "none" else str(api_key_env)
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.policy = _policy(max_retries, base_delay, max_delay, jitter)
        self.defaults = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        self._sleep = sleep
        self._rng = random.Random()

        if self.api_key_env is None:
            key = "EMPTY"
        else:
            key = os.environ.get(self.api_key_env, "")
            if not key.strip():
                raise BackendError(
                    f"openai: environment variable {self.api_key_env} is not set or empty; export the API key "
                    f"there, name another variable with api_key_env=..., or use api_key_env=none for a "
                    f"server that needs no key"
                )
        self._secrets = (key,)
        try:
            import openai  # lazy: the [openai] extra
        except ImportError:
            raise BackendError("openai backend needs the openai package: pip install safebeal[openai]") from None
        try:
            self._client = openai.OpenAI(api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout)
        except Exception as exc:  # noqa: BLE001 - e.g. a malformed base_url
            raise BackendError(f"openai: cannot create client: {describe_error(exc, self._secrets)}") from None

    def config(self) -> Dict[str, Any]:
        return {
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,  # the variable's name, never its value
            "concurrency": self.concurrency,
            "max_retries": self.policy.max_retries,
            "base_delay": self.policy.base_delay,
            "max_delay": self.policy.max_delay,
            "jitter": self.policy.jitter,
            "timeout": self.timeout,
            **self.defaults,
        }

    def _request(self, prompt: Prompt, params: Dict[str, Any]) -> tuple:
        resp = self._client.chat.completions.create(model=self.model, messages=prompt, **params)
        choices = getattr(resp, "choices", None) or []
        if not choices:
            raise ValueError("response has no choices")
        text = choices[0].message.content
        if text is None:
            raise ValueError(f"response has no text (finish_reason={choices[0].finish_reason!r})")
        usage = None
        if getattr(resp, "usage", None) is not None:
            u = resp.usage
            usage = {k: getattr(u, k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")
                     if isinstance(getattr(u, k, None), int)}
        return text, usage

    def _one(self, prompt: Prompt, params: Dict[str, Any]) -> Generation:
        start = time.perf_counter()
        res = retry_call(lambda: self._request(prompt, params), self.policy, self._sleep, rng=self._rng)
        latency = time.perf_counter() - start
        if res.ok:
            text, usage = res.value
            return Generation(text, None, latency, res.attempts, usage)
        hint = ""
        if getattr(res.error, "status_code", None) in (401, 403):
            hint = f"check the API key in ${self.api_key_env}" if self.api_key_env else "the server wants an API key"
        return Generation(None, describe_error(res.error, self._secrets, hint), latency, res.attempts)

    def _generate(self, prompts: List[Prompt], **gen_kwargs: Any) -> List[Generation]:
        kwargs = dict(gen_kwargs)
        max_tokens = _max_tokens(kwargs, self.defaults["max_tokens"])
        unknown = set(kwargs) - set(_OPENAI_PARAMS)
        if unknown:
            raise BackendError(f"openai: unsupported generation arguments {sorted(unknown)}")
        params = {k: v for k, v in {**self.defaults, **kwargs, "max_tokens": max_tokens}.items() if v is not None}
        if len(prompts) == 1 or self.concurrency == 1:
            return [self._one(p, params) for p in prompts]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(prompts)),
                                thread_name_prefix="safebeal-openai") as pool:
            return list(pool.map(lambda p: self._one(p, params), prompts))

    def close(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()


# --------------------------------------------------------------------------------------------
# Local model helpers (hf, vllm)
# --------------------------------------------------------------------------------------------


def _looks_like_path(model: str) -> bool:
    """Hub ids are ``name`` or ``org/name``; anything else with a path shape is a local path."""
    return model.startswith(("/", ".", "~")) or model.count("/") > 1 or "\\" in model


def _resolve_model(model: str, backend: str) -> str:
    """A local directory (must exist) or a hub id (``org/name``); a missing path is a BackendError."""
    expanded = os.path.expanduser(model)
    if os.path.exists(expanded):
        if not os.path.isdir(expanded):
            raise BackendError(f"{backend}: model path {model!r} is a file; give the model directory")
        return expanded
    if _looks_like_path(model):
        raise BackendError(f"{backend}: model path {model!r} does not exist")
    return model


def _one_per_prompt(n: int, error: str, latency: float) -> List[Generation]:
    return [Generation(None, error, latency, 1) for _ in range(n)]


# --------------------------------------------------------------------------------------------
# hf (transformers)
# --------------------------------------------------------------------------------------------


@BACKENDS.register("hf", help="local transformers model (hf:model=<hub id or path>)")
class HFBackend(Backend):
    """Batched generation with ``transformers`` (the ``[train]`` extra).

    Prompts are rendered with the tokenizer's chat template if it has one, else with
    :func:`render_plain`; batches are left-padded; decoding is greedy unless ``temperature > 0``.
    Only the newly generated text is returned. Model and tokenizer load at construction.
    """

    name = "hf"

    def __init__(
        self,
        model: Optional[str] = None,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = 256,
        batch_size: int = 8,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int = 0,
        trust_remote_code: bool = False,
        arg: Optional[str] = None,
    ):
        self.model_name = _model_arg(model, arg, "hf")
        if int(batch_size) < 1 or int(max_new_tokens) < 1:
            raise BackendError("hf: batch_size and max_new_tokens must be >= 1")
        path = _resolve_model(self.model_name, "hf")
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise BackendError(f"hf backend needs torch and transformers ({exc.name} is missing): "
                               f"pip install safebeal[train]") from None
        self._torch = torch
        self.device = self._pick_device(torch, str(device))
        self.dtype_name = str(dtype)
        torch_dtype = self._pick_dtype(torch, self.dtype_name, self.device)
        self.max_new_tokens = int(max_new_tokens)
        self.batch_size = int(batch_size)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.seed = int(seed)
        self.trust_remote_code = bool(trust_remote_code)
        try:
            tok = transformers.AutoTokenizer.from_pretrained(path, trust_remote_code=self.trust_remote_code)
        except Exception as exc:  # noqa: BLE001 - OSError, ValueError, hub errors
            raise BackendError(f"hf: cannot load tokenizer from {self.model_name!r}: {describe_error(exc)}") from None
        tok.padding_side = "left"
        if tok.pad_token is None:
            fallback = tok.eos_token if tok.eos_token is not None else tok.unk_token
            if fallback is None:
                raise BackendError(f"hf: tokenizer of {self.model_name!r} has no pad, eos or unk token")
            tok.pad_token = fallback
        self.tokenizer = tok
        major_minor = tuple(int(x) for x in re.findall(r"\d+", transformers.__version__)[:2])
        dtype_kw = "dtype" if major_minor >= (4, 56) else "torch_dtype"
        try:
            net = transformers.AutoModelForCausalLM.from_pretrained(
                path, trust_remote_code=self.trust_remote_code, **{dtype_kw: torch_dtype})
        except Exception as exc:  # noqa: BLE001
            raise BackendError(f"hf: cannot load model from {self.model_name!r}: {describe_error(exc)}") from None
        self.model = net.to(self.device).eval()
        self.uses_chat_template = bool(getattr(tok, "chat_template", None))

    @staticmethod
    def _pick_device(torch: Any, device: str) -> str:
        if device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise BackendError(f"hf: device {device!r} requested but CUDA is not available")
        return device

    @staticmethod
    def _pick_dtype(torch: Any, dtype: str, device: str) -> Any:
        if dtype == "auto":
            if device.startswith("cuda"):
                return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
            return torch.float32
        table = {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16,
                 "fp16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}
        if dtype not in table:
            raise BackendError(f"hf: unknown dtype {dtype!r}; use auto, {', '.join(table)}")
        return table[dtype]

    def config(self) -> Dict[str, Any]:
        return {"model": self.model_name, "device": self.device, "dtype": self.dtype_name,
                "max_new_tokens": self.max_new_tokens, "batch_size": self.batch_size,
                "temperature": self.temperature, "top_p": self.top_p, "seed": self.seed,
                "trust_remote_code": self.trust_remote_code}

    def render(self, prompt: Prompt) -> str:
        return render_for_tokenizer(self.tokenizer, prompt)

    def _encode(self, texts: List[str]) -> Any:
        """Token ids exactly as Safe-Align training builds a prompt (``safebeal.align.encoding``): the rendered text
        without added special tokens, then BOS in front when the tokenizer has one and the text did not start
        with it; left-padded into a batch."""
        tok = self.tokenizer
        ids = tok(texts, add_special_tokens=False)["input_ids"]
        bos = tok.bos_token_id
        if bos is not None:
            ids = [x if x[:1] == [bos] else [bos] + x for x in ids]
        return tok.pad({"input_ids": ids}, padding=True, return_tensors="pt")

    def _run_batch(self, texts: List[str], max_new: int, temperature: float, top_p: float,
                   seed: int) -> List[tuple]:
        torch = self._torch
        enc = self._encode(texts).to(self.device)
        kwargs: Dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": self.tokenizer.pad_token_id}
        if temperature > 0:
            torch.manual_seed(seed)
            kwargs.update(do_sample=True, temperature=temperature, top_p=top_p)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            out = self.model.generate(**enc, **kwargs)
        new = out[:, enc["input_ids"].shape[1]:].cpu()
        prompt_lens = enc["attention_mask"].sum(dim=1).tolist()
        eos = self.tokenizer.eos_token_id
        results = []
        for row, plen in zip(new.tolist(), prompt_lens):
            n = len(row)
            if eos is not None and eos in row:
                n = row.index(eos) + 1
            text = self.tokenizer.decode(row[:n], skip_special_tokens=True)
            results.append((text, {"prompt_tokens": int(plen), "completion_tokens": n,
                                   "total_tokens": int(plen) + n}))
        return results

    def _generate(self, prompts: List[Prompt], **gen_kwargs: Any) -> List[Generation]:
        kwargs = dict(gen_kwargs)
        max_new = int(_max_tokens(kwargs, self.max_new_tokens))
        temperature = float(kwargs.pop("temperature", self.temperature) or 0.0)
        top_p = float(kwargs.pop("top_p", self.top_p))
        seed = kwargs.pop("seed", self.seed)
        seed = self.seed if seed is None else int(seed)
        if kwargs:
            raise BackendError(f"hf: unsupported generation arguments {sorted(kwargs)}")
        out: List[Generation] = []
        for i in range(0, len(prompts), self.batch_size):
            chunk = prompts[i:i + self.batch_size]
            start = time.perf_counter()
            try:
                texts = [self.render(p) for p in chunk]
                results = self._run_batch(texts, max_new, temperature, top_p, seed)
            except Exception as exc:  # noqa: BLE001 - e.g. OOM: fall back to one prompt at a time
                if len(chunk) == 1:
                    out.append(Generation(None, describe_error(exc), time.perf_counter() - start, 1))
                    continue
                for p in chunk:
                    out.extend(self._generate([p], max_new_tokens=max_new, temperature=temperature,
                                              top_p=top_p, seed=seed))
                continue
            latency = time.perf_counter() - start
            out.extend(Generation(text, None, latency, 1, usage) for text, usage in results)
        return out

    def close(self) -> None:
        self.model = None


# --------------------------------------------------------------------------------------------
# vllm (offline batched)
# --------------------------------------------------------------------------------------------


@BACKENDS.register("vllm", help="offline batched generation with vLLM (vllm:model=<hub id or path>)")
class VLLMBackend(Backend):
    """``vllm.LLM`` offline generation (the ``[vllm]`` extra). One call generates the whole batch."""

    name = "vllm"

    def __init__(
        self,
        model: Optional[str] = None,
        dtype: str = "auto",
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: Optional[int] = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int = 0,
        chat: bool = True,
        trust_remote_code: bool = False,
        arg: Optional[str] = None,
    ):
        self.model_name = _model_arg(model, arg, "vllm")
        try:
            import vllm
        except ImportError:
            raise BackendError("vllm backend needs the vllm package: pip install safebeal[vllm]") from None
        path = _resolve_model(self.model_name, "vllm")
        self._vllm = vllm
        self.settings = {"dtype": str(dtype), "tensor_parallel_size": int(tensor_parallel_size),
                         "gpu_memory_utilization": float(gpu_memory_utilization),
                         "max_model_len": max_model_len, "seed": int(seed),
                         "trust_remote_code": bool(trust_remote_code)}
        self.sampling = {"max_tokens": int(max_tokens), "temperature": float(temperature),
                         "top_p": float(top_p), "seed": int(seed)}
        self.chat = bool(chat)
        engine_args = {k: v for k, v in self.settings.items() if v is not None}
        try:
            self._llm = vllm.LLM(model=path, **engine_args)
        except Exception as exc:  # noqa: BLE001
            raise BackendError(f"vllm: cannot load {self.model_name!r}: {describe_error(exc)}") from None

    def config(self) -> Dict[str, Any]:
        return {"model": self.model_name, **self.settings, **self.sampling, "chat": self.chat}

    def _generate(self, prompts: List[Prompt], **gen_kwargs: Any) -> List[Generation]:
        kwargs = dict(gen_kwargs)
        max_tokens = _max_tokens(kwargs, self.sampling["max_tokens"])
        sampling = {**self.sampling, **kwargs, "max_tokens": max_tokens}
        start = time.perf_counter()
        try:
            params = self._vllm.SamplingParams(**sampling)
            if self.chat:
                outs = self._llm.chat(prompts, params, use_tqdm=False)
            else:
                outs = self._llm.generate([render_plain(p) for p in prompts], params, use_tqdm=False)
        except Exception as exc:  # noqa: BLE001 - the whole batch failed
            return _one_per_prompt(len(prompts), describe_error(exc), time.perf_counter() - start)
        latency = time.perf_counter() - start
        result = []
        for o in outs:
            completion = o.outputs[0]
            plen = len(o.prompt_token_ids or [])
            clen = len(completion.token_ids or [])
            result.append(Generation(completion.text, None, latency, 1,
                                     {"prompt_tokens": plen, "completion_tokens": clen, "total_tokens": plen + clen}))
        return result


__all__ = [
    "BACKENDS", "Backend", "BackendError", "ErrorInfo", "Generation", "HFBackend", "Message", "MockBackend",
    "MockFailure", "OpenAIBackend", "Prompt", "RetryPolicy", "RetryResult", "StatusError", "VLLMBackend",
    "classify_error", "describe_error", "normalize_prompt", "parse_retry_after", "redact", "render_plain",
    "retry_call",
]
