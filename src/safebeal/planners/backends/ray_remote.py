"""Generation through a backend as Ray tasks (``bench --executor ray``).

:class:`RayGeneration` replaces a backend's ``_stream`` while a run lasts: the prompts that the response cache
does not answer are sent, a chunk at a time, to Ray tasks, each of which calls the same backend's ``_generate``
in a Ray worker process, and the results come back as they finish. Everything else stays in the driver: the
prompts, the settings layering, the response cache (hits are answered before anything is sent; every result is
stored as soon as it arrives), the record of each sample.

How a worker gets the backend (:meth:`~safebeal.planners.backends.base.Backend.remote_recipe`): by default it
re-creates it from its spec (``openai:model=...,base_url=...``), once per worker process, so secrets are read
from the worker's own environment (an API key travels through ``api_key_env``, never through Ray); a backend
whose spec cannot re-create it (a mock with in-memory responses) is shipped as a copy. The results are the local
executor's for every backend whose output depends on the prompt and the settings (greedy decoding, a server,
a mock keyed by prompt); a mock that answers the n-th prompt it sees with the n-th scripted response depends on
the order prompts reach each worker, as it would with any concurrency.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from safebeal.planners.backends.records import BackendError, Generation, Prompt

#: how long a wait for results lasts before the driver's heartbeat (which writes finished evaluations) runs
BEAT_S = 0.25

# -- worker side ---------------------------------------------------------------------------------------------
_BACKENDS: Dict[Tuple[str, Any], Any] = {}


def _backend_from(kind: str, value: Any) -> Any:
    if kind == "object":
        return value
    key = (kind, value)
    b = _BACKENDS.get(key)
    if b is None:
        from safebeal.planners.backends.base import BACKENDS

        b = _BACKENDS[key] = BACKENDS.create(value)
    return b


def _generate_remote(kind: str, value: Any, prompts: List[Prompt], settings: Dict[str, Any]) -> List[Generation]:
    # ``value`` is a top-level argument, so that Ray resolves an object-store reference (a copied backend)
    out = _backend_from(kind, value)._generate(prompts, **settings)
    if len(out) != len(prompts):
        raise BackendError(f"backend returned {len(out)} results for {len(prompts)} prompts")
    return out


# -- driver side ---------------------------------------------------------------------------------------------
class RayGeneration:
    """A backend's generation as Ray tasks: at most ``in_flight`` tasks at a time, each of at most the backend's
    ``stream_batch`` prompts (fewer, so that a backend generating everything in one call still spreads over
    ``in_flight`` tasks)."""

    def __init__(self, backend: Any, ray: Any, in_flight: Optional[int] = None):
        self.backend = backend
        self.ray = ray
        if in_flight is None:
            conc = getattr(backend, "concurrency", None)  # a server backend: its own request concurrency
            cpus = int(ray.cluster_resources().get("CPU", 1) or 1)
            in_flight = int(conc) if conc else cpus
        self.in_flight = max(1, int(in_flight))
        recipe = backend.remote_recipe()
        # a copied backend goes to the object store once, not once per task
        self.recipe = ("object", ray.put(recipe[1])) if recipe[0] == "object" else recipe
        self._remote = ray.remote(_generate_remote).options(max_retries=0)

    def stream(self, prompts: List[Prompt], settings: Dict[str, Any], stop: Optional[threading.Event],
               on_done: Optional[Callable[[int, Generation], None]] = None) -> Iterator[Tuple[int, Generation]]:
        """``(index, Generation)`` as Ray tasks finish (the contract of ``Backend._stream``). Once ``stop`` is set
        no new task starts; those running are cancelled when the iterator is closed."""
        if not prompts:
            return
        step = max(1, min(int(self.backend.stream_batch), math.ceil(len(prompts) / self.in_flight)))
        chunks = [list(range(s, min(s + step, len(prompts)))) for s in range(0, len(prompts), step)]
        running: Dict[Any, List[int]] = {}
        nxt = 0
        try:
            while nxt < len(chunks) or running:
                while nxt < len(chunks) and len(running) < self.in_flight and not (stop is not None and stop.is_set()):
                    idx = chunks[nxt]
                    ref = self._remote.remote(*self.recipe, [prompts[i] for i in idx], settings)
                    running[ref] = idx
                    nxt += 1
                if not running:
                    return  # stopped before anything else started
                done, _ = self.ray.wait(list(running), num_returns=1, timeout=BEAT_S)
                if not done:
                    if hasattr(stop, "beat"):
                        stop.beat()
                    continue
                for ref in done:
                    idx = running.pop(ref)
                    out = self.ray.get(ref)
                    if len(out) != len(idx):
                        raise BackendError(f"{self.backend.name} backend returned {len(out)} results for "
                                           f"{len(idx)} prompts")
                    if on_done is not None:
                        for i, gen in zip(idx, out):
                            on_done(i, gen)
                    for i, gen in zip(idx, out):
                        yield i, gen
                if hasattr(stop, "beat"):
                    stop.beat()
        finally:
            for ref in running:  # interrupted: what is still running is not waited for
                try:
                    self.ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001
                    pass


__all__ = ["RayGeneration"]
