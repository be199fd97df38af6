"""Grounding: the object names of parsed steps -> the scene's ids (pure: no simulator).

:func:`resolve_objects` maps object names to scene ids with the task's object list and the simulator's name
equivalences (stove/oven, fridge/freezer, tv/television, ...), comparing names without case, spaces, hyphens or
underscores (:func:`safebeal.plans.parse.name_key`). An id written in the text wins when it exists. A name that is
none of the scene's objects is RETURNED as a :class:`HallucinatedObject`, never raised.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Container, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from safebeal.plans.parse import name_key
from safebeal.plans.steps import Arg, HallucinatedObject, PlanError, Step


@lru_cache(maxsize=1)
def _default_equivalences() -> Dict[str, Tuple[str, ...]]:
    from safebeal.resources import name_equivalence

    return _equivalence_index(name_equivalence())


def _equivalence_index(eq: Mapping[str, Sequence[str]]) -> Dict[str, Tuple[str, ...]]:
    out: Dict[str, List[str]] = {}
    for a, bs in eq.items():
        for b in bs:
            ka, kb = name_key(a), name_key(b)
            if ka != kb:
                out.setdefault(ka, []).append(kb)
                out.setdefault(kb, []).append(ka)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def resolve_objects(
    steps: Iterable[Step],
    objects: Union[Mapping[str, int], Iterable[Tuple[str, int]]],
    known_ids: Optional[Container[int]] = None,
    equivalences: Optional[Mapping[str, Sequence[str]]] = None,
) -> Tuple[Tuple[Step, ...], Optional[PlanError]]:
    """Give every argument a scene id. Returns ``(steps, error)``: the resolved steps before the first
    :class:`HallucinatedObject` (all of them when there is none).

    - ``objects``: the task's objects, ``{name: id}`` or ``(name, id)`` pairs; for a name listed twice, the
      first wins.
    - An id written in the text is kept (with the name as written) when it is one of ``objects``' ids or is
      in ``known_ids`` (e.g. the scene's node ids); otherwise the name decides.
    - Names are compared by :func:`name_key`, then through ``equivalences`` (default: the simulator's
      ``class_name_equivalence.json``, used in both directions). A resolved name is written as the object
      list spells it (``stove`` -> ``oven``).
    """
    pairs = objects.items() if isinstance(objects, Mapping) else objects
    index: Dict[str, Tuple[str, int]] = {}
    ids = set()
    for name, i in pairs:
        index.setdefault(name_key(name), (name, int(i)))
        ids.add(int(i))
    eq = _default_equivalences() if equivalences is None else _equivalence_index(equivalences)
    out: List[Step] = []
    for n, step in enumerate(steps):
        args: List[Arg] = []
        for a in step.args:
            if a.id is not None and (a.id in ids or (known_ids is not None and a.id in known_ids)):
                args.append(a)
                continue
            k = name_key(a.name)
            hit = index.get(k)
            if hit is None:
                hit = next((index[e] for e in eq.get(k, ()) if e in index), None)
            if hit is None:
                why = f"<{a.name}> is not one of the scene's objects" + (f" and id {a.id} does not exist" if a.id is not None else "")
                return tuple(out), HallucinatedObject(why, line=step.source_line or None, step=n, text=str(step))
            args.append(Arg(hit[0], hit[1]))
        out.append(Step(step.action, tuple(args), step.source_line))
    return tuple(out), None
