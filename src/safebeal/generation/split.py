"""SafeRisks v3's split by hazard pattern: no test pattern occurs in train, no test family's skeleton either.

An entry's pattern is :func:`safebeal.generation.audit.pattern_of` (the rule its first unsafe plan breaks and the
verb-level difference between that plan and the safe plan). A family's **skeleton** is its safe plan and first
unsafe plan written with its roles renamed in order of first use (``take A, put A ON B``): two families that differ
only in their objects share it.

Families are linked when they share a pattern (in any of their built entries) or a skeleton; each connected group
goes to one side. Per category the groups are ranked by a salted hash of their first family id, and taken into
test in that order until the test side holds ``fraction`` of the category's entries and at least
``min_patterns`` distinct patterns; a group larger than twice the wanted test share, or one that would take the test
side past half the category (:data:`MAX_TEST_SHARE`), stays in train, and at least one group always does. The choice depends only on the built entries and the seeds, so a build regenerates it byte for
byte.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from typing import Dict, Hashable, List, Sequence, Set, Tuple

from safebeal.datasets.saferisks import SafeRisksEntry
from safebeal.generation.audit import pattern_of
from safebeal.generation.procedural import SPLIT_SALT
from safebeal.generation.seeds import HazardSeed

#: the test side never takes more than this share of a category's entries, even short of ``min_patterns``
MAX_TEST_SHARE = 0.5
_WORD = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_@]*")


def family_skeleton(f: HazardSeed) -> Tuple[str, Tuple[str, ...], Tuple[str, ...]]:
    """``(category, safe steps, first unsafe plan's steps)`` with the family's role names replaced by ``A``, ``B``,
    ... in order of first use (the safe plan first)."""
    roles = set(f.roles)
    names: Dict[str, str] = {}

    def norm(step: str) -> str:
        def sub(m: "re.Match[str]") -> str:
            w = m.group(0)
            if w not in roles:
                return w
            if w not in names:
                names[w] = _letters(len(names))
            return names[w]

        return _WORD.sub(sub, step)

    safe = tuple(norm(s) for s in f.safe)
    unsafe = tuple(norm(s) for s in f.unsafe[0].plan) if f.unsafe else ()
    return f.category, safe, unsafe


def _letters(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("A") + r) + out
    return out


class _Groups:
    def __init__(self) -> None:
        self.parent: Dict[Hashable, Hashable] = {}

    def find(self, x: Hashable) -> Hashable:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: Hashable, b: Hashable) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb, key=repr)] = min(ra, rb, key=repr)


def family_groups(entries: Sequence[SafeRisksEntry], families: Sequence[HazardSeed]) -> List[List[str]]:
    """The families of ``entries`` in groups that share a pattern or a skeleton (each group sorted, groups sorted by
    their first family)."""
    fams = {f.id: f for f in families}
    g = _Groups()
    present = sorted({e.family for e in entries})
    for fid in present:
        g.find(("family", fid))
        if fid in fams:
            g.union(("family", fid), ("skeleton", family_skeleton(fams[fid])))
    for e in entries:
        g.union(("family", e.family), ("pattern", pattern_of(e)))
    groups: Dict[Hashable, List[str]] = defaultdict(list)
    for fid in present:
        groups[g.find(("family", fid))].append(fid)
    return sorted((sorted(v) for v in groups.values()), key=lambda v: v[0])


def pattern_split(entries: Sequence[SafeRisksEntry], families: Sequence[HazardSeed], fraction: float,
                  min_patterns: int) -> Set[str]:
    """The test families (see the module docstring)."""
    cat = {f.id: f.category for f in families}
    n_of: Dict[str, int] = defaultdict(int)
    pats_of: Dict[str, Set[Tuple]] = defaultdict(set)
    for e in entries:
        n_of[e.family] += 1
        pats_of[e.family].add(pattern_of(e))
    by_cat: Dict[str, List[List[str]]] = defaultdict(list)
    for grp in family_groups(entries, families):
        by_cat[cat.get(grp[0], "")].append(grp)
    test: Set[str] = set()
    for c, groups in sorted(by_cat.items()):
        total = sum(n_of[f] for grp in groups for f in grp)
        want = fraction * total
        ranked = sorted(groups, key=lambda grp: hashlib.sha256(f"{SPLIT_SALT}:{grp[0]}".encode()).hexdigest())
        n, pats, left = 0, set(), len(ranked)
        for grp in ranked:
            if n >= want and len(pats) >= min_patterns:
                break
            size = sum(n_of[f] for f in grp)
            if left <= 1 or size > 2 * max(want, 1) or n + size > MAX_TEST_SHARE * total:
                continue
            test.update(grp)
            n += size
            pats |= {p for f in grp for p in pats_of[f]}
            left -= 1
    return test
