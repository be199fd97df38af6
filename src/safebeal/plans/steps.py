"""Plan steps and why an output is not a plan: the records every layer shares about scripts.

- :class:`Step` (an action and its :class:`Arg` objects, with the output line it came from) and
  :class:`ParseResult` (``steps``, ``format``, ``error``), made by :func:`safebeal.plans.parse.parse_plan`;
- the typed errors (:class:`ParseError`, :class:`EmptyPlan`, :class:`PlanTooLarge`, :class:`UnknownAction`,
  :class:`ArgumentCount`, :class:`HallucinatedObject`), all :class:`PlanError` and so :class:`SafebealError`.
  They are RETURNED by the parser and by :func:`safebeal.plans.grounding.resolve_objects`, never raised.
  ``step`` numbers are 0-based (as in :class:`safebeal.scene.StepError`), ``line`` numbers are 1-based lines of
  the output text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from safebeal.errors import SafebealError

_CLIP = 200


# -- errors ----------------------------------------------------------------------------------------------
class PlanError(SafebealError):
    """Why an output is not a usable plan. ``line``: 1-based line of the output (None if unknown);
    ``step``: 0-based step index (None if not tied to a step); ``text``: the offending text (clipped)."""

    kind = "plan_error"

    def __init__(self, message: str, *, line: Optional[int] = None, step: Optional[int] = None, text: Optional[str] = None):
        self.message = message
        self.line = line
        self.step = step
        self.text = None if text is None else (text if len(text) <= _CLIP else text[:_CLIP] + "...")
        where = []
        if line is not None:
            where.append(f"line {line}")
        if step is not None:
            where.append(f"step {step + 1}")
        prefix = ", ".join(where)
        super().__init__((prefix + ": " if prefix else "") + message + (f": {self.text!r}" if self.text else ""))

    def to_dict(self) -> Dict[str, Any]:
        return {"type": type(self).__name__, "kind": self.kind, "message": self.message, "line": self.line,
                "step": self.step, "text": self.text}


class ParseError(PlanError):
    """Nothing parseable, or a malformed line / JSON document."""

    kind = "parse"


class EmptyPlan(ParseError):
    """The output is empty or holds no action."""

    kind = "empty"


class PlanTooLarge(ParseError):
    """Over MAX_CHARS characters or MAX_STEPS steps."""

    kind = "too_large"


class UnknownAction(PlanError):
    kind = "unknown_action"


class ArgumentCount(PlanError):
    kind = "argument_count"


class HallucinatedObject(PlanError):
    """A name that is not among the scene's objects (and no existing id was given)."""

    kind = "hallucinated_object"


ERROR_TYPES = (ParseError, EmptyPlan, PlanTooLarge, UnknownAction, ArgumentCount, HallucinatedObject)


# -- records ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Arg:
    name: str
    id: Optional[int] = None

    def __str__(self) -> str:
        return f"<{self.name}>" + ("" if self.id is None else f" ({self.id})")


@dataclass(frozen=True)
class Step:
    action: str
    args: Tuple[Arg, ...] = ()
    source_line: int = 0  # 1-based line of the output text it came from (0 if unknown)

    def __str__(self) -> str:
        return " ".join([f"[{self.action}]"] + [str(a) for a in self.args])

    @property
    def resolved(self) -> bool:
        return all(a.id is not None for a in self.args)


@dataclass(frozen=True)
class ParseResult:
    steps: Tuple[Step, ...]
    format: str  # "script" | "numbered" | "json" | "none"
    error: Optional[PlanError] = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def text(self) -> str:
        return "\n".join(str(s) for s in self.steps)
