"""The :class:`Backend` interface and the ``BACKENDS`` registry.

A backend implements ``config()`` and ``_generate(prompts, **settings)`` (one :class:`Generation` per prompt, in
order); it may override ``_stream`` to yield results as they finish (the ``openai`` backend does). Everything
else (prompt validation, settings layering and validation, the response cache, streaming) lives here, so a new
backend is one small module that registers itself with ``@BACKENDS.register(name)``.
"""

from __future__ import annotations

import abc
import os
import threading
from typing import Any, Callable, ClassVar, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from safebeal.planners.backends.cache import ResponseCache, cache_key
from safebeal.planners.backends.records import (
    DEFAULT_SETTINGS,
    BackendError,
    Generation,
    Prompt,
    layer_settings,
    normalize_prompt,
    normalize_settings,
)
from safebeal.planners.backends.retry import RetryPolicy, describe_error
from safebeal.registry import Registry


class Backend(abc.ABC):
    """A text generator for chat prompts.

    ``spec_settings`` holds the generation settings given in the backend's own spec (``openai:...,temperature=0.7``);
    ``defaults`` what the backend uses for a setting nobody gave. ``generate(prompts, **settings)`` layers them:
    backend defaults < backend spec < the call's settings (see :func:`safebeal.planners.backends.records.layer_settings`).
    """

    name: str = "backend"
    #: settings this backend accepts besides :data:`~safebeal.planners.backends.records.GEN_KEYS`
    extra_settings: ClassVar[Tuple[str, ...]] = ()
    #: values used for settings nobody gave
    defaults: ClassVar[Dict[str, Any]] = DEFAULT_SETTINGS
    #: whether runs attach the response cache (False for scripted backends)
    cacheable: ClassVar[bool] = True
    #: prompts per ``_generate`` call while streaming
    stream_batch: int = 1
    spec_settings: Dict[str, Any] = {}
    cache: Optional[ResponseCache] = None
    #: where uncached prompts are generated instead of ``_stream`` (``bench --executor ray`` sets a
    #: :class:`~safebeal.planners.backends.ray_remote.RayGeneration` for the run); None: here
    remote: Any = None

    # -- to implement -------------------------------------------------------------------------------------
    @abc.abstractmethod
    def config(self) -> Dict[str, Any]:
        """The arguments this backend was created with, secrets and generation settings removed (JSON-serialisable)."""

    @abc.abstractmethod
    def _generate(self, prompts: List[Prompt], **settings: Any) -> List[Generation]:
        """Generate for validated prompts with the effective settings; one Generation per prompt, in order."""

    def _stream(self, prompts: List[Prompt], settings: Dict[str, Any], stop: Optional[threading.Event],
                on_done: Optional[Callable[[int, Generation], None]] = None) -> Iterator[Tuple[int, Generation]]:
        """``(index, Generation)`` as results finish; the default calls ``_generate`` ``stream_batch`` prompts at a
        time and stops between calls once ``stop`` is set. ``on_done(index, generation)`` is called as soon as a
        result exists, before it is yielded (the response cache stores it there, so an interrupt between the
        response and its consumer loses nothing)."""
        step = max(1, int(self.stream_batch))
        for start in range(0, len(prompts), step):
            if stop is not None and stop.is_set():
                return
            if start and hasattr(stop, "beat"):
                stop.beat()
            chunk = prompts[start:start + step]
            out = self._generate(chunk, **settings)
            if len(out) != len(chunk):  # a bug in a backend, not a sample failure
                raise BackendError(f"{self.name} backend returned {len(out)} results for {len(chunk)} prompts")
            if on_done is not None:
                for j, gen in enumerate(out):
                    on_done(start + j, gen)
            for j, gen in enumerate(out):
                yield start + j, gen

    # -- settings -----------------------------------------------------------------------------------------
    def _init_settings(self, **given: Any) -> None:
        """Record the generation settings written in the backend's spec (None: not given)."""
        self.spec_settings = normalize_settings(given, self.name, self.extra_settings)

    def effective_settings(self, overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        over = normalize_settings(overrides or {}, self.name, self.extra_settings)
        return layer_settings(self.defaults, self.spec_settings, over)

    def request_settings(self, settings: Mapping[str, Any]) -> Dict[str, Any]:
        """The settings as this backend sends them (e.g. the openai backend's reasoning-model form)."""
        return dict(settings)

    def identity(self) -> Dict[str, Any]:
        """What, besides the request, decides the response: the response cache's key includes it."""
        cfg = self.config()
        return {"backend": self.name, **{k: cfg.get(k) for k in ("model", "base_url", "model_files") if k in cfg}}

    # -- generating ---------------------------------------------------------------------------------------
    def generate(self, prompts: Sequence[Union[str, Prompt]], **settings: Any) -> List[Generation]:
        """One :class:`Generation` per prompt, in order. Per-sample failures are recorded, not raised."""
        out: List[Optional[Generation]] = [None] * len(prompts)
        for i, gen in self.generate_iter(prompts, settings):
            out[i] = gen
        missing = [i for i, g in enumerate(out) if g is None]
        if missing:
            raise BackendError(f"{self.name} backend returned no result for prompt(s) {missing[:5]}")
        return out  # type: ignore[return-value]

    def generate_iter(self, prompts: Sequence[Union[str, Prompt]], settings: Optional[Mapping[str, Any]] = None,
                      stop: Optional[threading.Event] = None) -> Iterator[Tuple[int, Generation]]:
        """``(index, Generation)`` for each prompt as it finishes (cache hits first). Once ``stop`` is set no new
        request starts; closing the iterator (an interrupt) stops it too."""
        if isinstance(prompts, str) or (prompts and isinstance(prompts[0], Mapping)):
            raise BackendError("generate() takes a list of prompts; wrap a single prompt in a list")
        checked = [normalize_prompt(p) for p in prompts]
        eff = self.effective_settings(settings)
        todo = list(range(len(checked)))
        keys: List[str] = []
        cache = self.cache
        if cache is not None and checked:
            ident = self.identity()
            sent = self.request_settings(eff)
            keys = [cache_key(ident, p, sent) for p in checked]
            hits = cache.get_many(keys)
            for i, key in enumerate(keys):
                if key in hits:
                    yield i, hits[key]
            todo = [i for i, key in enumerate(keys) if key not in hits]
        if not todo:
            return
        store = None if cache is None else (lambda j, gen: cache.put(keys[todo[j]], gen))
        stream = self._stream if self.remote is None else self.remote.stream
        for j, gen in stream([checked[i] for i in todo], eff, stop, store):
            yield todo[j], gen

    # -- the rest -----------------------------------------------------------------------------------------
    def remote_recipe(self) -> Tuple[str, Any]:
        """How a Ray worker gets this backend (``bench --executor ray``): ``("spec", spec string)`` to re-create
        it there from :meth:`spec` (secrets come from the worker's environment), or ``("object", a picklable
        copy)`` for a backend its spec cannot re-create."""
        return ("spec", self.spec())

    def spec(self) -> str:
        """A spec string that re-creates this backend (scalar config values and the spec's settings)."""
        values = {**self.config(), **self.spec_settings}
        items = [f"{k}={v}" for k, v in values.items() if isinstance(v, (str, int, float, bool))]
        return self.name + (":" + ",".join(items) if items else "")

    def close(self) -> None:
        """Release resources (clients, models, GPU memory). Safe to call more than once."""

    def release(self) -> None:
        """Free what can be rebuilt on next use (a lazily built engine); the runner calls it when a planner is done."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec()}>"


BACKENDS: Registry[Backend] = Registry[Backend](
    "backend", plugins=("safebeal.planners.backends.mock", "safebeal.planners.backends.openai_api",
                        "safebeal.planners.backends.hf", "safebeal.planners.backends.vllm_engine",
                        "safebeal.planners.backends.transcript"))


def model_arg(model: Optional[str], arg: Optional[str], backend: str) -> str:
    if model is not None and arg is not None and str(model) != str(arg):
        raise BackendError(f"{backend}: give the model either positionally or as model=, not both")
    chosen = model if model is not None else arg
    if chosen is None or str(chosen).strip() == "":
        raise BackendError(f"{backend}: no model given (use '{backend}:model=...')")
    return str(chosen)


def make_policy(max_retries: int, base_delay: float, max_delay: float, jitter: float) -> RetryPolicy:
    return RetryPolicy(max_retries=int(max_retries), base_delay=float(base_delay),
                       max_delay=float(max_delay), jitter=float(jitter))


# -- local models (hf, vllm) -------------------------------------------------------------------------------------
def looks_like_path(model: str) -> bool:
    """Hub ids are ``name`` or ``org/name``; anything else with a path shape is a local path."""
    return model.startswith(("/", ".", "~")) or model.count("/") > 1 or "\\" in model


def resolve_backend_model(model: str, backend: str) -> str:
    """A local directory (must exist) or a hub id (``org/name``); a missing path is a BackendError."""
    expanded = os.path.expanduser(model)
    if os.path.exists(expanded):
        if not os.path.isdir(expanded):
            raise BackendError(f"{backend}: model path {model!r} is a file; give the model directory")
        return expanded
    if looks_like_path(model):
        raise BackendError(f"{backend}: model path {model!r} does not exist")
    return model


def model_files(path: str) -> Optional[str]:
    """A fingerprint of a local model directory's files (names, sizes, modification times), so that the
    response cache misses after a model is retrained into the same directory; None for a hub id."""
    if not os.path.isdir(path):
        return None
    import hashlib

    h = hashlib.sha256()
    for root, _, files in sorted(os.walk(path)):
        for f in sorted(files):
            st = os.stat(os.path.join(root, f))
            h.update(f"{os.path.relpath(os.path.join(root, f), path)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


def one_per_prompt(n: int, error: str, latency: float) -> List[Generation]:
    return [Generation(None, error, latency, 1) for _ in range(n)]


__all__ = ["BACKENDS", "Backend", "describe_error", "looks_like_path", "make_policy", "model_arg", "model_files",
           "one_per_prompt", "resolve_backend_model"]
