"""Errors, redaction and retries shared by the backends that make requests (no heavy imports here)."""

from __future__ import annotations

import email.utils
import math
import random
import re
import time
from dataclasses import dataclass, field
from datetime import timezone
from typing import Any, Callable, Iterable, List, Optional

from safebeal.errors import SafebealError
from safebeal.planners.backends.records import BackendError

# --------------------------------------------------------------------------------------------
# Errors, redaction, classification
# --------------------------------------------------------------------------------------------


class StatusError(SafebealError):
    """An HTTP-style failure with a status code (used by the mock backend and by tests); the retry loop records it
    in the sample (:func:`retry_call` never raises it).

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
#: the userinfo of a URL (``scheme://user:secret@host``): credentials, never recorded
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@\[\]\"',;]*@")


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


def strip_userinfo(text: str) -> str:
    """``text`` with the userinfo of every URL in it removed: ``http://user:secret@host/v1`` -> ``http://host/v1``."""
    return _USERINFO.sub(r"\1", text) if "@" in text else text


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove the given secrets, the credentials of URLs (userinfo) and anything shaped like an API key
    (``sk-...``) from ``text``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEY_PATTERN.sub("***", strip_userinfo(text))


def _message_in(body: Any, depth: int = 0) -> Optional[str]:
    """The server's explanation in an error body: ``{"error": {"message": ...}}``, ``{"message": ...}``,
    ``{"detail": ...}`` (FastAPI servers such as ``transformers serve``), ``{"error": "..."}`` or plain text."""
    if isinstance(body, str):
        text = body.strip()
        if text.startswith(("{", "[")) and depth == 0:
            try:
                import json

                return _message_in(json.loads(text), 1) or text
            except ValueError:
                pass
        return text or None
    if isinstance(body, dict):
        for key in ("message", "detail", "error", "msg"):
            if key in body and body[key]:
                found = _message_in(body[key], depth + 1)
                if found:
                    return found
        return None
    if isinstance(body, list) and body and depth < 3:
        return _message_in(body[0], depth + 1)
    return None


def server_message(exc: BaseException) -> Optional[str]:
    """What the server said about a failed request (an HTTP error's body), or None."""
    if not isinstance(getattr(exc, "status_code", None), int):
        return None
    found = _message_in(getattr(exc, "body", None))
    if found is None:
        try:
            found = _message_in(getattr(getattr(exc, "response", None), "text", None))
        except Exception:  # noqa: BLE001 - a body that cannot be read
            found = None
    return " ".join(found.split()) if found else None


def describe_error(exc: BaseException, secrets: Iterable[str] = (), hint: str = "") -> str:
    """``"<Type> (HTTP <status>): <message>"`` with the server's explanation from the error body (when the
    exception's text lacks it), truncated, secrets removed."""
    status = getattr(exc, "status_code", None)
    head = type(exc).__name__ + (f" (HTTP {status})" if isinstance(status, int) else "")
    message = str(exc) or repr(exc)
    said = server_message(exc)
    if said and said not in message:
        message = f"{message} - {said}"
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
    stopped: Optional[Callable[[], bool]] = None,
) -> RetryResult:
    """Call ``fn()`` until it succeeds, fails with a non-retryable error, or retries run out.

    Never raises for an ``Exception`` from ``fn`` (it is returned in ``RetryResult.error``);
    ``KeyboardInterrupt`` and other ``BaseException`` propagate. At most ``policy.max_retries + 1``
    attempts are made; ``sleep`` is called between attempts with the delay from the policy. When ``stopped()``
    turns true (a run was interrupted), no further attempt is made and the last error is returned.
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
            if stopped is not None and stopped():
                return result

