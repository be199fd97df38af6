"""The CLMASP action model at work: check a script step by step, or fill in what a skeleton plan leaves out.

Both run ``data/clmasp/actions.lp`` with ``clingo`` (the ``clmasp`` extra) over the facts of
:mod:`safebeal.planners.clmasp.facts`.

- :func:`verify`: every step fixed, no fillers; returns the index of the first step the model says cannot run
  (None: all run) and why.
- :class:`Refiner`: skeleton steps in order; before each, up to ``max_insert`` filler slots the solver may fill
  from candidate actions on the step's objects, what holds them and what is in hand, so that the step can run,
  with as few insertions as possible. The state after the step (read back from the answer set) starts the next
  solve.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from safebeal.errors import SafebealError
from safebeal.planners.clmasp.facts import Universe, state_fluents, static_facts, universe
from safebeal.scene import StateView

ACTIONS_LP = Path(__file__).resolve().parent.parent / "data" / "clmasp" / "actions.lp"
#: one step: (ACTION, (id, ...)); ids are scene node ids
Act = Tuple[str, Tuple[int, ...]]


def require_clingo():
    try:
        import clingo
    except ImportError:
        raise SafebealError("clmasp needs clingo: pip install 'safebeal[clmasp]' (or pip install clingo)") from None
    return clingo


@lru_cache(maxsize=4)
def action_model(path: str = str(ACTIONS_LP)) -> str:
    return Path(path).read_text()


@lru_cache(maxsize=1)
def _soakable() -> FrozenSet[str]:
    from safebeal.resources import name_equivalence
    from safebeal.scene.extensions import extensions

    members = set(extensions().sets.get("soakable", ()))
    eq = name_equivalence()
    members |= {c for c, aliases in eq.items() if any(a in members for a in aliases)}
    return frozenset(members)


def _term(action: str, ids: Sequence[int]) -> str:
    x = ids[0] if len(ids) > 0 else 0
    y = ids[1] if len(ids) > 1 else 0
    return f"{action.lower()},{x},{y}"


@dataclass
class Solution:
    occ: Dict[int, Act]  # step -> the action there
    bad: Dict[int, List[str]]  # step -> reasons it cannot run
    final: FrozenSet[str]  # fluents of the last state
    optimal: bool
    seconds: float


_FLUENT = re.compile(r"^[a-z_]+(\(.*\))?$")


def solve(static: Sequence[str], init: Iterable[str], fixed: Dict[int, Act], fillers: Sequence[int] = (),
          cands: Sequence[Tuple[Act, int]] = (), forbid: Iterable[Act] = (), model: Optional[str] = None) -> Solution:
    """One clingo run over ``h = max step`` steps: ``fixed`` steps, ``fillers`` slots choosing from ``cands``
    (action, cost), never one of ``forbid``."""
    clingo = require_clingo()
    t0 = time.perf_counter()
    h = max(list(fixed) + list(fillers) + [0])
    parts = [model or action_model(), "\n".join(static), f"s(1..{h})." if h else ""]
    parts.append("\n".join(f"init({f})." for f in sorted(init)))
    parts.append("\n".join(f"fixed({t},{_term(a, ids)})." for t, (a, ids) in sorted(fixed.items())))
    parts.append("\n".join(f"filler({t})." for t in fillers))
    for (a, ids), w in cands:
        parts.append(f"cand({_term(a, ids)}). cost({_term(a, ids)},{w}).")
    parts.append("\n".join(f"forbid({_term(a, ids)})." for a, ids in forbid))
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], "\n".join(parts))
    ctl.ground([("base", [])])
    best: Dict[str, object] = {}

    def on_model(m) -> None:
        occ: Dict[int, Act] = {}
        bad: Dict[int, List[str]] = {}
        final: Set[str] = set()
        for sym in m.symbols(shown=True):
            if sym.name == "occ":
                t, a, x, y = (sym.arguments[i] for i in range(4))
                ids = tuple(v.number for v in (x, y) if v.number != 0)
                occ[t.number] = (a.name.upper(), ids)
            elif sym.name == "bad":
                bad.setdefault(sym.arguments[0].number, []).append(str(sym.arguments[1]))
            elif sym.name == "final":
                final.add(str(sym.arguments[0]))
        best.update(occ=occ, bad=bad, final=frozenset(final), optimal=m.optimality_proven)

    res = ctl.solve(on_model=on_model)
    if not best:
        raise SafebealError(f"clmasp: the action model has no answer set ({res})")
    return Solution(best["occ"], best["bad"], best["final"], bool(best["optimal"]) or not fillers,  # type: ignore
                    time.perf_counter() - t0)


# -- verification ---------------------------------------------------------------------------------------
@dataclass
class ExecutabilityVerdict:
    first_failure: Optional[int]  # 0-based index of the first step the model refuses (None: all run)
    reasons: List[str]
    seconds: float

    @property
    def executable(self) -> bool:
        return self.first_failure is None


def verify(view: StateView, steps: Sequence[Act], extended: bool = True) -> ExecutabilityVerdict:
    """The model's verdict on ``steps`` run from ``view``: the first step it says cannot run, and why."""
    uni = universe(view, [i for _, ids in steps for i in ids])
    static = static_facts(view, uni, _soakable(), extended)
    sol = solve(static, state_fluents(view, uni), {t + 1: s for t, s in enumerate(steps)})
    if not sol.bad:
        return ExecutabilityVerdict(None, [], sol.seconds)
    t = min(sol.bad)
    return ExecutabilityVerdict(t - 1, sorted(sol.bad[t]), sol.seconds)


# -- refinement -----------------------------------------------------------------------------------------
_ARGS = re.compile(r"^(\w+)\((.*)\)$")


def _facts(final: Iterable[str]) -> Dict[str, List[Tuple[int, ...]]]:
    out: Dict[str, List[Tuple[int, ...]]] = {}
    for f in final:
        m = _ARGS.match(f)
        if m is None:
            out.setdefault(f, []).append(())
            continue
        try:
            out.setdefault(m.group(1), []).append(tuple(int(v) for v in m.group(2).split(",")))
        except ValueError:  # st(O,closed): keep the id only
            out.setdefault(m.group(1), []).append((int(m.group(2).split(",")[0]),))
    return out


@dataclass
class StepRefinement:
    index: int  # the skeleton step's index
    inserted: List[Act]
    runs: bool  # the model says the step can run after the insertions
    reasons: List[str]  # why it cannot (when it cannot)
    seconds: float
    forbidden: List[Act] = field(default_factory=list)


class Refiner:
    """Fill in a skeleton: see the module docstring. ``check`` (safe=true) is called with the steps planned so
    far and the new ones; it returns the index among the new ones of an unsafe step, or None."""

    def __init__(self, view: StateView, skeleton: Sequence[Act], max_insert: int = 3, extended: bool = True,
                 check: Optional[Callable[[List[Act], List[Act]], Optional[int]]] = None, max_retries: int = 5):
        self.view = view
        self.skeleton = list(skeleton)
        self.max_insert = int(max_insert)
        self.uni: Universe = universe(view, [i for _, ids in skeleton for i in ids])
        self.static = static_facts(view, self.uni, _soakable(), extended)
        self.check = check
        self.max_retries = max_retries
        self.props = {i: view.node(i).properties for i in self.uni.known}
        self.classes = {i: view.node(i).class_name for i in self.uni.known}

    def candidates(self, step: Act, state: Dict[str, List[Tuple[int, ...]]]) -> List[Tuple[Act, int]]:
        _, ids = step
        objs = [i for i in ids if i in self.uni.known]
        holders: List[int] = []
        for rel in ("on", "inside"):
            for f in state.get(rel, []):
                if len(f) == 2 and f[0] in objs and f[1] not in objs and f[1] not in holders:
                    holders.append(f[1])
        held = [f[0] for f in state.get("holds", [])]
        out: List[Tuple[Act, int]] = [(("STANDUP", ()), 1)]
        for group, w in ((objs, 1), (holders, 2)):
            for o in group:
                p = self.props.get(o, frozenset())
                out.append((("WALK", (o,)), w))
                if "CAN_OPEN" in p or self.classes.get(o) in ("desk", "window"):
                    out.append((("OPEN", (o,)), w))
                if "HAS_SWITCH" in p:
                    out += [(("SWITCHOFF", (o,)), w + 1), (("SWITCHON", (o,)), w + 1)]
                if "HAS_PLUG" in p:
                    out.append((("PLUGIN", (o,)), w))
        for o in objs:
            p = self.props.get(o, frozenset())
            if "GRABBABLE" in p or self.classes.get(o) in ("water", "child"):
                out.append((("GRAB", (o,)), 1))
            out.append((("TURNTO", (o,)), 1))
        surfaces = [o for o in objs + holders if "SURFACES" in self.props.get(o, frozenset())]
        for h in held:
            if h in objs:
                continue
            for s in surfaces:
                out.append((("PUTBACK", (h, s)), 3))
        return list(dict.fromkeys(out))

    def run(self) -> Tuple[List[Act], List[int], List[StepRefinement]]:
        """``(plan, inserted positions in it, per skeleton step records)``. After a step no insertion can make
        runnable, the rest of the skeleton follows as written."""
        state: FrozenSet[str] = frozenset(state_fluents(self.view, self.uni))
        plan: List[Act] = []
        inserted_at: List[int] = []
        records: List[StepRefinement] = []
        k = self.max_insert
        stopped = False
        for idx, step in enumerate(self.skeleton):
            if stopped:
                plan.append(step)
                continue
            forbid: List[Act] = []
            seconds = 0.0
            for _attempt in range(self.max_retries + 1):
                fixed = {k + 1: step}
                sol = solve(self.static, state, fixed, list(range(1, k + 1)),
                            self.candidates(step, _facts(state)), forbid)
                seconds += sol.seconds
                new = [sol.occ[t] for t in range(1, k + 1) if t in sol.occ]
                runs = (k + 1) not in sol.bad
                if self.check is None or not new:
                    break
                bad_i = self.check(plan, new + [step])
                if bad_i is None or bad_i >= len(new):
                    break
                forbid.append(new[bad_i])
            rec = StepRefinement(idx, new, runs, sorted(sol.bad.get(k + 1, [])), round(seconds, 4), forbid)
            records.append(rec)
            if not runs:
                stopped = True
                new = []  # nothing makes it run: insert nothing, keep the rest as written
                plan.append(step)
                continue
            for a in new:
                inserted_at.append(len(plan))
                plan.append(a)
            plan.append(step)
            state = sol.final
        return plan, inserted_at, records
