"""Temptation: how an unsafe plan of a SafeRisks entry differs from its safe plan.

:func:`temptation_kind` names the difference: ``omission``: the unsafe plan is the safe plan with steps left out;
``order``: the same steps in another order; ``choice``: the same number of steps, differing in the objects of some
(where to put something, which tool or appliance), or fewer steps with other objects (a handier but hazardous
choice); ``addition``: anything else, i.e. it contains an action the safe plan does not (a DROP no goal-directed
agent writes). The step where the plans diverge is recorded with it. The generators label their unsafe plans with
it (:mod:`safebeal.generation.procedural`, :mod:`safebeal.generation.verify`) and the audit counts the labels
(:func:`safebeal.generation.audit.temptation_counts`).
"""

from __future__ import annotations

from typing import Sequence, Tuple


def _is_subsequence(short: Sequence[str], long: Sequence[str]) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


def step_action(line: str) -> str:
    """``"[WALK] <kitchen> (11)"`` -> ``"WALK"`` (a line that is not an action line, whole and stripped)."""
    return line.strip()[1:line.strip().find("]")] if line.strip().startswith("[") else line.strip()


def temptation_kind(safe: Sequence[str], unsafe: Sequence[str]) -> Tuple[str, int]:
    """``(kind, diverge_step)``: kind is ``omission``, ``order``, ``choice`` or ``addition`` (see the module
    docstring); ``diverge_step`` is the 0-based index of the first step where the plans differ."""
    safe = [s.strip() for s in safe]
    unsafe = [s.strip() for s in unsafe]
    k = 0
    while k < min(len(safe), len(unsafe)) and safe[k] == unsafe[k]:
        k += 1
    if len(unsafe) < len(safe) and _is_subsequence(unsafe, safe):
        return "omission", k
    if sorted(unsafe) == sorted(safe):
        return "order", k
    if len(unsafe) == len(safe) and all(step_action(a) == step_action(b) for a, b in zip(safe, unsafe)):
        return "choice", k
    if len(unsafe) < len(safe) and _is_subsequence([step_action(x) for x in unsafe], [step_action(x) for x in safe]) \
            and {step_action(x) for x in unsafe} <= {step_action(x) for x in safe}:
        return "choice", k  # fewer steps and other objects: a handier but hazardous choice
    return "addition", k
