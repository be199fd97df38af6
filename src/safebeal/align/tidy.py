"""Remove the idle steps an edit leaves behind in a rejected plan (issue 32, item 1).

The blind naturalness audit (``audits/pair_naturalness.py``) found the same flaw in most unnatural rejected plans:
the edit removed or moved the act a step existed for, and the step stayed. Its reasons, verbatim:
"ends with a pointless WALK to the freezer", "WALK to the faucet with no action, then walks back to the spoon",
"repeated WALKs to the freezer it is already standing at", "opens the freezer only to put the chicken on the
counter, then closes it", "grabs a towel and puts it down unused". Real planners do not write these; a reader
learns "the plan with the pointless walk is the bad one".

:func:`tidy_edit` finds three kinds of idle step and removes those the edit created (an idle step the chosen plan
has at the same place, in the part both plans share, is the planner's style and stays):

- a **move** (WALK, RUN, FIND, TURNTO, LOOKAT) to an object, not a room, that is the plan's last line or is followed
  at once by another WALK, RUN or FIND: the agent goes there and does nothing;
- an **idle opening**: OPEN X, then CLOSE X, and nothing in between acts on X (moves to X aside; they go too) or
  picks anything up (a GRAB names what it takes, not where from);
- an **idle fetch**: GRAB X and, on the very next line, a put-down of X: picked up and put down unused (with a
  walk between, it is carried somewhere: a transport, not idle). Only
  looked for when the rejected plan is the chosen one with steps left out: an edit that changes where X goes
  (``substitute``) writes a grab and a put-down that are its very point.

Removal repeats until nothing idle is left (removing one step can leave the walk before it idle). The pair judge
(:class:`safebeal.align.pair_judge.PairMaker`) judges the tidied plan in the simulator like any other candidate:
it must still run, be flagged and reach the goal.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from safebeal.align.data import common_prefix_length
from safebeal.align.mutations import MOVE_ACTIONS as MOVES  # lines that take the agent elsewhere
from safebeal.align.mutations import PUT_ACTIONS as PUTS
from safebeal.align.ontask import MOTION as LOOKS  # lines that only move the agent or turn its eyes
from safebeal.scene import ScriptLine
from safebeal.scene.homes import ROOM_KINDS

#: lines that may take something out of an open container without naming it
TAKES = frozenset({"GRAB"})
#: walking to a room and then to an object in it is how plans are written
ROOMS = frozenset(ROOM_KINDS)


def _target(ln: ScriptLine) -> Optional[Tuple[str, int]]:
    return (ln.args[0].name, ln.args[0].id) if ln.args else None


def _is_move_to_object(ln: ScriptLine) -> bool:
    return ln.action in LOOKS and bool(ln.args) and ln.args[0].name not in ROOMS


def idle_groups(lines: Sequence[ScriptLine], fetches: bool = True) -> List[Tuple[int, ...]]:
    """The idle steps of ``lines`` as groups of indices removed together (see the module docstring); idle fetches
    only with ``fetches``."""
    groups: List[Tuple[int, ...]] = []
    n = len(lines)
    for i, ln in enumerate(lines):
        if _is_move_to_object(ln) and (i == n - 1 or lines[i + 1].action in MOVES):
            groups.append((i,))
        elif ln.action == "OPEN" and ln.args:
            x = _target(ln)
            between: List[int] = []
            for j in range(i + 1, n):
                lj = lines[j]
                if lj.action == "CLOSE" and _target(lj) == x:
                    groups.append((i, *between, j))
                    break
                if lj.action in TAKES:  # it may come out of X (a line names what it takes, not where from)
                    break
                if any((a.name, a.id) == x for a in lj.args):
                    if lj.action in LOOKS:
                        between.append(j)
                        continue
                    break
        elif fetches and ln.action == "GRAB" and ln.args and i + 1 < n and lines[i + 1].action in PUTS \
                and _target(lines[i + 1]) == _target(ln):
            groups.append((i, i + 1))
    return groups


def _shared_places(chosen: Sequence[ScriptLine], rejected: Sequence[ScriptLine]) -> Dict[int, int]:
    """Index in ``rejected`` -> the same line's index in ``chosen``, for the lines of their common prefix and common
    suffix (the part the edit did not touch)."""
    c, r = [str(x) for x in chosen], [str(x) for x in rejected]
    k = common_prefix_length(c, r)
    m = common_prefix_length(c[k:][::-1], r[k:][::-1])
    shift = len(c) - len(r)
    return {**{i: i for i in range(k)}, **{i: i + shift for i in range(len(r) - m, len(r))}}


def _omits_only(chosen: Sequence[ScriptLine], rejected: Sequence[ScriptLine]) -> bool:
    """Whether ``rejected`` is ``chosen`` with one or more lines left out and nothing else changed."""
    if len(rejected) >= len(chosen):
        return False
    it = iter(str(ln) for ln in chosen)
    return all(any(c == str(r) for c in it) for r in rejected)


def tidy_edit(chosen: Sequence[ScriptLine], rejected: Sequence[ScriptLine]) -> Optional[List[ScriptLine]]:
    """``rejected`` without the idle steps the edit made, or None when it has none. An idle step in the part the
    two plans share (common prefix or suffix) that is idle in ``chosen`` at the same place is the planner's style
    and stays. Groups are removed one at a time, first first, and the plan is searched again after each removal."""
    fetches = _omits_only(chosen, rejected)
    chosen_groups = set(idle_groups(chosen, fetches))
    out = list(rejected)
    changed = False
    while True:
        shared = _shared_places(chosen, out)
        # an idle group the chosen plan has at the same place (all of it in the shared part) is the planner's style
        drop = next((g for g in idle_groups(out, fetches)
                     if not (all(i in shared for i in g) and tuple(shared[i] for i in g) in chosen_groups)), None)
        if drop is None:
            return out if changed else None
        gone = set(drop)
        out = [ln for i, ln in enumerate(out) if i not in gone]
        changed = True
