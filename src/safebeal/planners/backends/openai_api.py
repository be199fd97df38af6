"""``openai``: chat completions from any OpenAI-compatible server (OpenAI, vLLM serve, transformers serve, ...)."""

from __future__ import annotations

import os
import queue
import random
import re
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from safebeal.planners.backends.base import BACKENDS, Backend, make_policy, model_arg
from safebeal.planners.backends.records import BackendError, Generation, Prompt
from safebeal.planners.backends.retry import describe_error, retry_call, strip_userinfo

#: model names that take the reasoning form of a request (``reasoning=auto``)
REASONING_MODELS = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)", re.IGNORECASE)
DEFAULT_BASE_URL = "https://api.openai.com/v1"


@BACKENDS.register("openai", help="any OpenAI-compatible chat endpoint (openai:model=gpt-4o,base_url=...)")
class OpenAIBackend(Backend):
    """Chat completions from an OpenAI-compatible server.

    The key is read from the environment variable named by ``api_key_env`` (default ``OPENAI_API_KEY``) at
    construction; a missing or empty variable is a :class:`BackendError`. For servers that need no key, pass
    ``api_key_env=none``: the dummy key ``EMPTY`` is sent. The base URL is ``base_url=``, else
    ``$OPENAI_BASE_URL``, else OpenAI's; the one used is recorded with where it came from.

    Up to ``concurrency`` requests are in flight at all times (daemon worker threads, so an interrupted run does
    not wait for them); each is retried by :func:`retry_call` (the client's own retries are off, so attempts are
    counted here).

    Reasoning models (``reasoning=auto``: names starting ``o1``, ``o3``, ``o4``, ``gpt-5``; or ``reasoning=true``)
    get ``max_completion_tokens`` instead of ``max_tokens``, no ``temperature`` or ``top_p``, and
    ``reasoning_effort`` when it is set.
    """

    name = "openai"
    extra_settings = ("presence_penalty", "frequency_penalty")

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
        reasoning: Any = "auto",
        temperature: Optional[float] = None,
        max_tokens: Optional[int] = None,
        max_new_tokens: Optional[int] = None,
        top_p: Optional[float] = None,
        seed: Optional[int] = None,
        stop: Optional[Any] = None,
        reasoning_effort: Optional[str] = None,
        presence_penalty: Optional[float] = None,
        frequency_penalty: Optional[float] = None,
        sleep: Callable[[float], None] = time.sleep,
        arg: Optional[str] = None,
    ):
        self.model = model_arg(model, arg, "openai")
        if int(concurrency) < 1:
            raise BackendError(f"openai: concurrency must be >= 1, got {concurrency}")
        if float(timeout) <= 0:
            raise BackendError(f"openai: timeout must be > 0, got {timeout}")
        if str(reasoning).lower() not in ("auto", "true", "false"):
            raise BackendError(f"openai: reasoning must be auto, true or false, got {reasoning!r}")
        self.reasoning_arg = str(reasoning).lower()
        self.reasoning = (bool(REASONING_MODELS.match(self.model)) if self.reasoning_arg == "auto"
                          else self.reasoning_arg == "true")
        self._init_settings(temperature=temperature, max_tokens=max_tokens, max_new_tokens=max_new_tokens,
                            top_p=top_p, seed=seed, stop=stop, reasoning_effort=reasoning_effort,
                            presence_penalty=presence_penalty, frequency_penalty=frequency_penalty)
        if base_url is not None:
            self.base_url, self.base_url_source = str(base_url), "spec"
        elif os.environ.get("OPENAI_BASE_URL"):
            self.base_url, self.base_url_source = os.environ["OPENAI_BASE_URL"], "OPENAI_BASE_URL"
        else:
            self.base_url, self.base_url_source = DEFAULT_BASE_URL, "default"
        self.api_key_env = None if api_key_env is None or str(api_key_env).lower() == "none" else str(api_key_env)
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.policy = make_policy(max_retries, base_delay, max_delay, jitter)
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
            "base_url": strip_userinfo(self.base_url),  # never the credentials a URL may carry (user:secret@)
            "base_url_source": self.base_url_source,  # spec, OPENAI_BASE_URL or default
            "api_key_env": self.api_key_env,  # the variable's name, never its value
            "concurrency": self.concurrency,
            "max_retries": self.policy.max_retries,
            "base_delay": self.policy.base_delay,
            "max_delay": self.policy.max_delay,
            "jitter": self.policy.jitter,
            "timeout": self.timeout,
            "reasoning": self.reasoning,
        }

    def remote_recipe(self) -> tuple:
        """For a Ray worker (``bench --executor ray``): the spec, plus what it leaves out but the worker needs to
        reach the same server: the base URL wherever it came from, and ``api_key_env=none``. The key itself is
        read from the worker's environment."""
        extra = []
        if self.base_url_source != "spec" and self.base_url:
            extra.append(f"base_url={self.base_url}")
        if self.api_key_env is None:
            extra.append("api_key_env=none")
        spec = self.spec(credentials=True)
        return ("spec", spec + ("," if not spec.endswith(":") else "") + ",".join(extra) if extra else spec)

    def spec(self, credentials: bool = False) -> str:
        """The backend's spec as recorded (a base URL's userinfo left out; ``credentials``: kept, for a worker)."""
        values = {k: v for k, v in self.config().items() if k not in ("base_url_source", "reasoning")}
        if credentials:
            values["base_url"] = self.base_url
        if self.base_url_source != "spec":
            values.pop("base_url")
        if self.reasoning_arg != "auto":
            values["reasoning"] = self.reasoning_arg
        items = [f"{k}={v}" for k, v in {**values, **self.spec_settings}.items() if isinstance(v, (str, int, float, bool))]
        return self.name + ":" + ",".join(items)

    def request_settings(self, settings: Mapping[str, Any]) -> Dict[str, Any]:
        params = dict(settings)
        if self.reasoning:
            params.pop("temperature", None)
            params.pop("top_p", None)
            if "max_tokens" in params:
                params["max_completion_tokens"] = params.pop("max_tokens")
        elif "reasoning_effort" in params:
            raise BackendError(f"openai: reasoning_effort is only sent to reasoning models; {self.model!r} is not "
                               "one by name: add reasoning=true to the backend spec")
        return params

    def _request(self, prompt: Prompt, params: Dict[str, Any]) -> tuple:
        resp = self._client.chat.completions.create(model=self.model, messages=prompt, **params)
        choices = getattr(resp, "choices", None) or []
        if not choices:
            raise ValueError("response has no choices")
        text = choices[0].message.content
        finish = getattr(choices[0], "finish_reason", None)
        if text is None:
            raise ValueError(f"response has no text (finish_reason={finish!r})")
        usage = None
        if getattr(resp, "usage", None) is not None:
            u = resp.usage
            usage = {k: getattr(u, k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")
                     if isinstance(getattr(u, k, None), int)}
        return text, usage, finish

    def _one(self, prompt: Prompt, params: Dict[str, Any], sleep: Callable[[float], None] = None,
             stopped: Optional[Callable[[], bool]] = None) -> Generation:
        start = time.perf_counter()
        res = retry_call(lambda: self._request(prompt, params), self.policy, sleep or self._sleep, rng=self._rng,
                         stopped=stopped)
        latency = time.perf_counter() - start
        if res.ok:
            text, usage, finish = res.value
            return Generation(text, None, latency, res.attempts, usage, finish)
        hint = ""
        if getattr(res.error, "status_code", None) in (401, 403):
            hint = f"check the API key in ${self.api_key_env}" if self.api_key_env else "the server wants an API key"
        return Generation(None, describe_error(res.error, self._secrets, hint), latency, res.attempts)

    def _generate(self, prompts: List[Prompt], **settings: Any) -> List[Generation]:
        out: List[Optional[Generation]] = [None] * len(prompts)
        for i, gen in self._stream(prompts, settings, None):
            out[i] = gen
        return out  # type: ignore[return-value]

    def _stream(self, prompts: List[Prompt], settings: Dict[str, Any], stop: Optional[threading.Event],
                on_done: Optional[Callable[[int, Generation], None]] = None) -> Iterator[Tuple[int, Generation]]:
        params = self.request_settings(settings)
        if len(prompts) == 1 or self.concurrency == 1:  # no threads needed
            for i, p in enumerate(prompts):
                if stop is not None and stop.is_set():
                    return
                gen = self._one(p, params)
                if on_done is not None:
                    on_done(i, gen)
                yield i, gen
            return
        done = threading.Event()  # set when this stream is closed (finished, or interrupted by its consumer)

        def stopped() -> bool:
            return done.is_set() or (stop is not None and stop.is_set())

        sleep = self._sleep if self._sleep is not time.sleep else (lambda s: (done.wait(s), None)[1])
        todo: "queue.SimpleQueue[Tuple[int, Prompt]]" = queue.SimpleQueue()
        for item in enumerate(prompts):
            todo.put(item)
        results: "queue.SimpleQueue[Tuple[int, Generation]]" = queue.SimpleQueue()

        def worker() -> None:
            while not stopped():
                try:
                    i, p = todo.get_nowait()
                except queue.Empty:
                    return
                gen = self._one(p, params, sleep, stopped)
                if on_done is not None and not (gen.error and done.is_set()):  # not an attempt cut short by a stop
                    on_done(i, gen)
                results.put((i, gen))

        beat = getattr(stop, "beat", None)  # a StreamControl's heartbeat, called while waiting
        threads = [threading.Thread(target=worker, name=f"safebeal-openai-{k}", daemon=True)
                   for k in range(min(self.concurrency, len(prompts)))]
        for t in threads:
            t.start()
        try:
            for _ in range(len(prompts)):
                while True:
                    try:
                        item = results.get(timeout=0.05)
                        break
                    except queue.Empty:
                        if not any(t.is_alive() for t in threads) and results.empty():
                            return  # stopped from outside: what finished was yielded
                        if beat is not None:
                            beat()
                yield item
        finally:
            done.set()  # no new request starts; requests in flight are abandoned (daemon threads)

    def close(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()
