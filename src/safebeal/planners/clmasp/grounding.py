"""Grounding: each object a skeleton plan names becomes one scene node.

In order, for each argument:

1. ``resolve``: the benchmark's own rule (an id written in the text that exists; else the task's listed objects by
   name, then through the simulator's class equivalences: stove/oven, fridge/freezer, tv/television). A plan that
   resolves is grounded exactly as the benchmark would read it.
2. ``lexical``: the most similar name (difflib ratio over name keys, at least ``threshold``) among the task's
   listed objects, then among every object in the scene (``coffee_maker`` -> ``coffe_maker``,
   ``kitchen_cabinets`` -> ``kitchencabinet``). Ties: listed objects first, then the lowest id.
3. ``embedding`` (optional, ``embed=<hub id or dir>``, the ``hf`` extra): cosine similarity of mean-pooled
   embeddings of the names, at least ``embed_threshold``, over the same candidates.

Nothing found: the argument is not grounded and the plan is left as written.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.plans.grounding import resolve_objects
from safebeal.plans.parse import name_key
from safebeal.plans.steps import Arg, Step

DEFAULT_THRESHOLD = 0.8


@dataclass(frozen=True)
class Grounding:
    step: int
    name: str  # as written
    id: int
    scene_name: str
    method: str  # resolve | lexical | embedding

    def to_dict(self) -> Dict[str, Any]:
        return {"step": self.step, "name": self.name, "id": self.id, "scene_name": self.scene_name,
                "method": self.method}


class Embedder:
    """Mean-pooled last hidden states of a transformers encoder (``hf`` extra), cached per name."""

    def __init__(self, model: str):
        try:
            import torch  # noqa: F401
            from transformers import AutoModel, AutoTokenizer
        except ImportError:
            from safebeal.errors import SafebealError

            raise SafebealError("clmasp: embed= needs the hf extra (pip install 'safebeal[hf]')") from None
        self.tok = AutoTokenizer.from_pretrained(model)
        self.model = AutoModel.from_pretrained(model).eval()
        self._cache: Dict[str, Any] = {}

    def vec(self, text: str):
        import torch

        if text not in self._cache:
            enc = self.tok([text.replace("_", " ")], return_tensors="pt")
            with torch.no_grad():
                out = self.model(**enc).last_hidden_state[0]
            v = out.mean(0)
            self._cache[text] = v / v.norm()
        return self._cache[text]

    def similarity(self, a: str, b: str) -> float:
        return float((self.vec(a) * self.vec(b)).sum())


@lru_cache(maxsize=65536)
def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def best_match(name: str, candidates: Sequence[Tuple[str, int]], threshold: float = DEFAULT_THRESHOLD,
               embedder: Optional[Embedder] = None, embed_threshold: float = 0.8) -> Optional[Tuple[str, int, str]]:
    """``(scene name, id, method)`` of the candidate most like ``name``, or None under the thresholds."""
    key = name_key(name)
    scored = sorted(((-_ratio(key, name_key(n)), i, n) for i, (n, nid) in enumerate(candidates)), key=lambda x: x[:2])
    if scored and -scored[0][0] >= threshold:
        _, i, n = scored[0]
        return n, candidates[i][1], "lexical"
    if embedder is not None and candidates:
        names = list(dict.fromkeys(n for n, _ in candidates))
        sims = sorted(((-embedder.similarity(name, n), j, n) for j, n in enumerate(names)), key=lambda x: x[:2])
        if -sims[0][0] >= embed_threshold:
            n = sims[0][2]
            return n, next(nid for cn, nid in candidates if cn == n), "embedding"
    return None


def ground(steps: Sequence[Step], objects: Sequence[Tuple[str, int]], scene_objects: Sequence[Tuple[str, int]],
           known_ids: Any = None, threshold: float = DEFAULT_THRESHOLD,
           embedder: Optional[Embedder] = None) -> Tuple[Optional[List[Step]], List[Grounding], Optional[str]]:
    """``(grounded steps or None, groundings, why not)``. ``objects``: the task's listed (name, id) pairs;
    ``scene_objects``: every (class name, id) of the scene, the fallback."""
    listed = list(objects)
    pool = listed + [(n, i) for n, i in scene_objects if (n, i) not in set(listed)]
    out: List[Step] = []
    rec: List[Grounding] = []
    for k, st in enumerate(steps):
        args: List[Arg] = []
        for a in st.args:
            got, err = resolve_objects([Step(st.action, (a,), st.source_line)], listed, known_ids=known_ids)
            if err is None:
                r = got[0].args[0]
                args.append(r)
                rec.append(Grounding(k, a.name, int(r.id), r.name, "resolve"))
                continue
            hit = best_match(a.name, listed, threshold, embedder) or best_match(a.name, pool, threshold, embedder)
            if hit is None:
                return None, rec, f"step {k + 1}: <{a.name}> matches no object in the scene"
            n, nid, method = hit
            args.append(Arg(n, nid))
            rec.append(Grounding(k, a.name, nid, n, method))
        out.append(Step(st.action, tuple(args), st.source_line))
    return out, rec, None
