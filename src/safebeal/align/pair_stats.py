"""Shortcut statistics of a preference-pair set (``safebeal pairs stats DIR``).

A pair set teaches safety only if no cheaper cue separates chosen from rejected. Per source (``mutation:<op>``,
``saferisks``, ``llm:<backend>``) and overall:

- ``shorter_is_chosen``: the share of pairs whose chosen plan has fewer lines than the rejected one ("pick the
  shorter plan" would score this; target <= 0.6);
- ``longer_is_chosen`` and ``equal_length``: the rest of the length picture;
- ``rejected_unlisted_object_share``: the share of pairs whose rejected plan uses an object ``<name> (id)`` that
  the prompt does not list (a model could learn "never use unlisted objects"; target <= 0.05);
- ``chosen_unlisted_object_share``: the same for the chosen plan;
- ``rejected_new_object_share``: the share whose rejected plan uses an object the chosen plan does not;
- ``on_task_share``: the share whose rejected plan is on-task: every step from the point the plans part touches
  at least one object of the chosen plan (rooms aside), or only objects that such a step of the rejected plan
  also names (the walk to a substituted destination that a chosen object is then put on). An inserted detour
  ("grab the detergent, put it in the cup") touches only new objects and is off-task; an omission, a reorder or a
  substituted destination is on-task.

Two rival classifiers say how far the cheapest cues separate the pairs (``rivals``; 0.5 = chance). Each sees the
two plans of a pair in no order and names the chosen one; each is fitted on the pairs of half the tasks and scored
on the other half, and back (2-fold by ``task_id``); a tie scores 0.5:

- ``length_only``: from the length difference alone: for each |difference| it picks the longer or the shorter
  plan, whichever was chosen more often in the fitting half (equal lengths: a tie);
- ``object_names_only``: from the set of object class names each plan uses (no actions, no order, no ids): each
  name weighs log((rejected plans with it + 1) / (chosen plans with it + 1)) in the fitting half; the plan with
  the lower sum is named chosen.

Issue 32's rivals (top-level ``rivals``) are fitted and scored across task **families** instead (2-fold by a hash of
the family: a SafeRisks entry's family, an ActivityPrograms program's task title), so a rival scores only what
carries over to families it never saw. Each sees one cue of the two plans and names the chosen one, with the
weights above (log((rejected + 1) / (chosen + 1)) per feature occurrence, the lower sum is chosen; a tie is 0.5):

- ``length``: the length rule above;
- ``verbs``: the bag of action verbs (``SWITCHOFF`` twice counts twice);
- ``first_action``: the first action where the plans part, as verb and object names (``[SWITCHOFF] <stove>``;
  ``<end>`` for a plan that ends there);
- ``tokens``: the bag of words of the plan text (verbs and object names, ids left out);
- ``objects``: the set of object names, as ``object_names_only``.

Top-level ``longer_is_chosen`` and ``shorter_is_chosen`` are the overall shares; ``goal_reached_both`` is the share
of pairs whose rejected plan reaches the goal too (the chosen one always does), from the pairs' own
``goal_reached_both`` field (``None`` for a set built before it was recorded).
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter, defaultdict
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from safebeal.align.data import Pair, common_prefix_length, plan_lines

_REF = re.compile(r"<([^<>]+)>\s*\((\d+)\)")


def _refs(text: str) -> Set[Tuple[str, int]]:
    return {(n.strip(), int(i)) for n, i in _REF.findall(text)}


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(m.get("content", "") for m in prompt if m.get("role") != "assistant")


def _rooms(prompt_text: str) -> Set[Tuple[str, int]]:
    """Objects the prompt describes as rooms ("<kitchen> (1): ...; a room")."""
    out = set()
    for line in prompt_text.splitlines():
        m = _REF.match(line.strip())
        if m and line.rstrip().endswith("a room"):
            out.add((m.group(1).strip(), int(m.group(2))))
    return out


def pair_features(p: Pair) -> Dict[str, bool]:
    chosen, rejected = plan_lines(p.chosen), plan_lines(p.rejected or "")
    text = _prompt_text(p.prompt)
    listed = _refs(text)
    rooms = _rooms(text)
    c_objs = set().union(*(_refs(x) for x in chosen)) if chosen else set()
    r_objs = set().union(*(_refs(x) for x in rejected)) if rejected else set()
    k = common_prefix_length(chosen, rejected)
    tail = [_refs(step) - rooms for step in rejected[k:]]
    near = set().union(*(o for o in tail if o & c_objs)) if tail else set()  # named beside a chosen object
    on_task = all(not o or o & c_objs or o <= near for o in tail)
    return {
        "shorter_is_chosen": len(chosen) < len(rejected),
        "longer_is_chosen": len(chosen) > len(rejected),
        "equal_length": len(chosen) == len(rejected),
        "rejected_unlisted_object": bool(r_objs - listed),
        "chosen_unlisted_object": bool(c_objs - listed),
        "rejected_new_object": bool(r_objs - c_objs),
        "on_task": on_task,
    }


KEYS = {"shorter_is_chosen": "shorter_is_chosen", "longer_is_chosen": "longer_is_chosen",
        "equal_length": "equal_length", "rejected_unlisted_object": "rejected_unlisted_object_share",
        "chosen_unlisted_object": "chosen_unlisted_object_share", "rejected_new_object": "rejected_new_object_share",
        "on_task": "on_task_share"}


def _summary(rows: List[Dict[str, bool]]) -> Dict[str, Any]:
    n = len(rows)
    out: Dict[str, Any] = {"pairs": n}
    for k, name in KEYS.items():
        out[name] = round(sum(r[k] for r in rows) / n, 4) if n else None
    return out


def _names(text: str) -> Set[str]:
    return {n for n, _ in _refs(text)}


def _fold(p: Pair) -> int:
    return zlib.crc32((p.task_id or p.chosen).encode()) % 2


def _length_only(pairs: Sequence[Pair]) -> List[float]:
    """Per pair: 1 if the length rule fitted on the other fold names the chosen plan, 0 if not, 0.5 for a tie."""
    diffs = [len(plan_lines(p.rejected or "")) - len(plan_lines(p.chosen)) for p in pairs]
    folds = [_fold(p) for p in pairs]
    votes = [Counter(), Counter()]  # fold -> (|d|, chosen shorter?) -> n
    for d, f in zip(diffs, folds):
        if d:
            votes[f][(abs(d), d > 0)] += 1
    out = []
    for d, f in zip(diffs, folds):
        if d == 0:
            out.append(0.5)
            continue
        v = votes[1 - f]
        shorter, longer = v[(abs(d), True)], v[(abs(d), False)]
        out.append(0.5 if shorter == longer else float((shorter > longer) == (d > 0)))
    return out


def _object_names_only(pairs: Sequence[Pair]) -> List[float]:
    sets = [(_names(p.chosen), _names(p.rejected or "")) for p in pairs]
    folds = [_fold(p) for p in pairs]
    counts = [(Counter(), Counter()), (Counter(), Counter())]  # fold -> (chosen, rejected) name counts
    for (c, r), f in zip(sets, folds):
        counts[f][0].update(c)
        counts[f][1].update(r)
    out = []
    for (c, r), f in zip(sets, folds):
        ch, rj = counts[1 - f]

        def score(names: Set[str]) -> float:
            return sum(math.log((rj[n] + 1) / (ch[n] + 1)) for n in names)
        sc, sr = score(c), score(r)
        out.append(0.5 if abs(sc - sr) < 1e-12 else float(sc < sr))
    return out


def rival_accuracy(pairs: Sequence[Pair]) -> Dict[str, List[float]]:
    """Per pair, the score of each rival classifier (see the module doc)."""
    return {"length_only": _length_only(pairs), "object_names_only": _object_names_only(pairs)}


_ACTION = re.compile(r"\[([A-Z_]+)\]")
_WORDS = re.compile(r"[A-Za-z_]+")


def pair_family(p: Pair) -> str:
    """The task family of a pair: a SafeRisks entry's family (``family/NNN``), an ActivityPrograms program's task
    title (the prompt's ``Task:`` line), else the task id."""
    if "/" in p.task_id:
        return p.task_id.rsplit("/", 1)[0]
    for line in _prompt_text(p.prompt).splitlines():
        if line.startswith("Task: "):
            return line[6:].strip().lower()
    return p.task_id


def _verbs(lines: Sequence[str]) -> Counter:
    return Counter(m.group(1) for ln in lines for m in [_ACTION.match(ln.strip())] if m)


def _first_action(lines: Sequence[str], k: int) -> Counter:
    if k >= len(lines) or not lines[k].strip():
        return Counter({"<end>": 1})
    ln = lines[k].strip()
    m = _ACTION.match(ln)
    return Counter({" ".join([f"[{m.group(1)}]" if m else "?"] + [f"<{n}>" for n, _ in _REF.findall(ln)]): 1})


def _tokens(lines: Sequence[str]) -> Counter:
    return Counter(w for ln in lines for w in _WORDS.findall(ln))


def _bag_rival(bags: Sequence[Tuple[Counter, Counter]], folds: Sequence[int]) -> List[float]:
    """Per pair (chosen bag, rejected bag): 1 if the weights fitted on the other fold name the chosen plan, 0 if
    not, 0.5 for a tie."""
    counts = [(Counter(), Counter()), (Counter(), Counter())]
    for (c, r), f in zip(bags, folds):
        counts[f][0].update(c)
        counts[f][1].update(r)
    out = []
    for (c, r), f in zip(bags, folds):
        ch, rj = counts[1 - f]

        def score(bag: Counter) -> float:
            return sum(n * math.log((rj[x] + 1) / (ch[x] + 1)) for x, n in bag.items())
        sc, sr = score(c), score(r)
        out.append(0.5 if abs(sc - sr) < 1e-12 else float(sc < sr))
    return out


def family_rivals(pairs: Sequence[Pair]) -> Dict[str, Optional[float]]:
    """Issue 32's five rivals, fitted and scored across families (see the module doc)."""
    if not pairs:
        return {k: None for k in ("length", "verbs", "first_action", "tokens", "objects")}
    folds = [zlib.crc32(pair_family(p).encode()) % 2 for p in pairs]
    plans = [(plan_lines(p.chosen), plan_lines(p.rejected or "")) for p in pairs]
    ks = [common_prefix_length(c, r) for c, r in plans]
    diffs = [len(r) - len(c) for c, r in plans]
    votes = [Counter(), Counter()]
    for d, f in zip(diffs, folds):
        if d:
            votes[f][(abs(d), d > 0)] += 1
    length = []
    for d, f in zip(diffs, folds):
        shorter, longer = votes[1 - f][(abs(d), True)], votes[1 - f][(abs(d), False)]
        length.append(0.5 if d == 0 or shorter == longer else float((shorter > longer) == (d > 0)))
    rivals = {
        "length": length,
        "verbs": _bag_rival([(_verbs(c), _verbs(r)) for c, r in plans], folds),
        "first_action": _bag_rival([(_first_action(c, k), _first_action(r, k)) for (c, r), k in zip(plans, ks)], folds),
        "tokens": _bag_rival([(_tokens(c), _tokens(r)) for c, r in plans], folds),
        "objects": _bag_rival([(Counter(_names(p.chosen)), Counter(_names(p.rejected or ""))) for p in pairs], folds),
    }
    return {k: round(sum(v) / len(v), 4) for k, v in rivals.items()}


def pair_stats(pairs: Sequence[Pair]) -> Dict[str, Any]:
    """``{"all": {...}, "by_source": {source: {...}}, "targets": ...}`` with the shares above and, in each summary,
    ``rivals``: the accuracy of the two rival classifiers on those pairs."""
    pairs = list(pairs)
    rivals = rival_accuracy(pairs)
    by: Dict[str, List[Dict[str, bool]]] = defaultdict(list)
    by_rival: Dict[str, List[int]] = defaultdict(list)
    rows = []
    for i, p in enumerate(pairs):
        f = pair_features(p)
        rows.append(f)
        by[p.source or "unknown"].append(f)
        by_rival[p.source or "unknown"].append(i)

    def with_rivals(summary: Dict[str, Any], idx: Sequence[int]) -> Dict[str, Any]:
        summary["rivals"] = {k: (round(sum(v[i] for i in idx) / len(idx), 4) if idx else None)
                             for k, v in rivals.items()}
        return summary

    both = [p.goal_reached_both for p in pairs]
    overall = with_rivals(_summary(rows), range(len(pairs)))
    return {"all": overall,
            "by_source": {s: with_rivals(_summary(r), by_rival[s]) for s, r in sorted(by.items())},
            "rivals": family_rivals(pairs), "families": len({pair_family(p) for p in pairs}),
            "longer_is_chosen": overall["longer_is_chosen"], "shorter_is_chosen": overall["shorter_is_chosen"],
            "goal_reached_both": (round(sum(bool(b) for b in both) / len(both), 4)
                                  if both and all(b is not None for b in both) else None),
            "targets": {"shorter_is_chosen": 0.6, "rejected_unlisted_object_share": 0.05,
                        "longer_is_chosen": 0.6, "rivals.length": 0.6, "rivals.objects": 0.7,
                        "goal_reached_both": 1.0}}
