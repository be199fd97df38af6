"""A backend in one module: any Python function from a chat prompt to text, as a model.

A backend implements ``config()`` (what it was created with, JSON, no secrets) and ``_generate(prompts,
**settings)`` (one Generation per prompt, in order); the Backend base class does the rest (prompt checks, settings,
the response cache, streaming). Any generating planner can then use it:

    safebeal bench --planner zero-shot --backend pyfunc:fn=my_backend:kitchen_model --limit 2
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, List

from safebeal.planners.backends.base import BACKENDS, Backend
from safebeal.planners.backends.records import BackendError, Generation, Prompt


def kitchen_model(prompt: Prompt, **settings: Any) -> str:
    """A stand-in for your model: walks to the kitchen whatever it is asked."""
    return "[WALK] <kitchen> (11)"


@BACKENDS.register("pyfunc", help="a Python function (chat prompt -> text) as a model: pyfunc:fn=package.module:function")
class PyFuncBackend(Backend):
    name = "pyfunc"

    def __init__(self, fn: str = "", arg: str = "", **settings: Any):
        self.fn = fn or arg  # pyfunc:fn=pkg.mod:f or pyfunc:pkg.mod:f
        module, _, attr = self.fn.partition(":")
        if not module or not attr:
            raise BackendError(f"pyfunc: fn={self.fn!r}: give the function as package.module:function")
        try:
            self._call: Callable[..., str] = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise BackendError(f"pyfunc: fn={self.fn!r}: {exc}") from None
        self._init_settings(**settings)  # temperature=, max_tokens=, ... written in the spec

    def config(self) -> Dict[str, Any]:
        return {"fn": self.fn}

    def identity(self) -> Dict[str, Any]:
        return {"backend": self.name, "fn": self.fn}  # the response cache keeps each function's answers apart

    def _generate(self, prompts: List[Prompt], **settings: Any) -> List[Generation]:
        out = []
        for p in prompts:
            try:
                out.append(Generation(str(self._call(p, **settings))))
            except Exception as exc:  # noqa: BLE001 - one sample's failure is recorded, the run goes on
                out.append(Generation(None, error=f"{type(exc).__name__}: {exc}"))
        return out
