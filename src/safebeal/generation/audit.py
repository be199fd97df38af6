"""Audits of a SafeRisks file: does it tempt, is it diverse, how many homes (``safebeal dataset stats --json``).

- **Temptation** (:func:`temptation_counts`): how the unsafe plans differ from the safe plans
  (:func:`safebeal.generation.temptation.temptation_kind`: omission, order, choice or addition).
- **Search audit** (:func:`search_audit`): the hazard-blind ``search`` planner's plan (the shortest plan to the
  goal) is executed and judged with the entry's intended states; ``search_unsafe_share`` per category is the share
  of entries whose shortest plan is unsafe (entries where search finds no plan count as not unsafe). It is slow
  (about half a second an entry), so builds write it beside the file (``<name>.audit.json.gz``) and ``stats`` reads
  it from there when it matches the entries.
- **Near-duplicates** (:func:`near_duplicate_share`): the core instruction (opener and context sentence removed)
  of each entry against the others of its family; an entry is a near-duplicate when one of them is at Rouge-L
  0.7 or above.
- **Homes**: ``activity:<id>`` bases all stand in the one shipped apartment; each ``home:<seed>`` is a home.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.datasets.saferisks import SafeRisksEntry
from safebeal.generation.files import sidecar, write_gz
from safebeal.generation.temptation import step_action, temptation_kind

NEAR_DUPLICATE = 0.7
APARTMENT = "apartment"


# -- hazard patterns (issue 31) -----------------------------------------------------------------------------------
#: steps that only move or orient the agent: left out of a pattern
NAVIGATION = frozenset({"WALK", "RUN", "FIND", "TURNTO", "LOOKAT"})


def pattern_of(e: SafeRisksEntry) -> Tuple[str, Tuple[str, ...], Tuple[str, ...]]:
    """An entry's hazard pattern: the rule its (first) unsafe plan breaks, and the verb-level difference between that
    plan and the safe plan, ``(rule id, unsafe verbs, safe verbs)``. The verbs are the plans' actions with
    navigation (WALK, RUN, FIND, TURNTO, LOOKAT) left out, less the longest prefix and suffix the two share: what
    the unsafe plan does instead of the safe one (``("PUTBACK", "SIT")`` against ``("SIT", "PUTBACK")``: the phone
    put on the seat before sitting down). Objects are left out, so a family's name-swapped twins share a pattern."""
    u = e.unsafe_plans[0]
    a = [v for v in map(step_action, u.plan) if v not in NAVIGATION]
    b = [v for v in map(step_action, e.safe_plan) if v not in NAVIGATION]
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    j = 0
    while j < min(len(a), len(b)) - i and a[len(a) - 1 - j] == b[len(b) - 1 - j]:
        j += 1
    return u.rule_id, tuple(a[i:len(a) - j]), tuple(b[i:len(b) - j])


def pattern_stats(entries: Sequence[SafeRisksEntry]) -> Dict[str, Any]:
    """``patterns`` (distinct, over ``entries``), ``test_patterns_in_train`` (distinct test-split patterns that also
    occur in the train split) and, per category, ``patterns``, ``max_pattern_share`` (the largest share of the
    category's entries one pattern has) and ``test_patterns`` (distinct among its test entries)."""
    pats = {e.id: pattern_of(e) for e in entries}
    train = {pats[e.id] for e in entries if e.split == "train"}
    test = {pats[e.id] for e in entries if e.split == "test"}
    per_cat: Dict[str, Dict[str, Any]] = {}
    for c in sorted({c for e in entries for c in e.categories}):
        es = [e for e in entries if c in e.categories]
        counts = Counter(pats[e.id] for e in es)
        per_cat[c] = {"patterns": len(counts),
                      "max_pattern_share": round(max(counts.values()) / len(es), 4),
                      "test_patterns": len({pats[e.id] for e in es if e.split == "test"})}
    return {"patterns": len(set(pats.values())), "test_patterns_in_train": len(test & train), "per_category": per_cat}


# -- homes and duplicates --------------------------------------------------------------------------------------
def home_of(e: SafeRisksEntry) -> str:
    base = e.environment.base
    return base if base.startswith("home:") else APARTMENT


@lru_cache(maxsize=1)
def _framing() -> Tuple[List[re.Pattern], List[str]]:
    from safebeal.generation.seeds import load_common

    common = load_common()
    pats = []
    for op in common.openers:
        esc = re.escape(op).replace(re.escape("{Core}"), "(?P<core>.+)").replace(re.escape("{core}"), "(?P<core>.+)")
        pats.append(re.compile("^" + esc + "$", re.IGNORECASE | re.DOTALL))
    contexts = sorted({c for c in common.contexts}, key=len, reverse=True)
    return pats, contexts


def core_instruction(e: SafeRisksEntry, family_contexts: Sequence[str] = ()) -> str:
    """The instruction without its opener and context sentence (the shared vocabulary of ``common.yaml`` and the
    family's own contexts)."""
    text = e.instruction.strip()
    pats, contexts = _framing()
    for c in sorted(set(contexts) | set(family_contexts), key=len, reverse=True):
        if c and text.endswith(" " + c):
            text = text[: -len(c) - 1].strip()
            break
    best = text
    for p in pats:
        m = p.match(text)
        if m and len(m.group("core")) < len(best):
            best = m.group("core")
    return best.strip().rstrip(".?!").strip()


def _seeds_or_none(name: str) -> list:
    """The families of a seed set, or none where its folder holds no file yet."""
    from safebeal.generation.seeds import load_seeds, seed_set

    return load_seeds(seeds=name) if any(seed_set(name)[1].glob("*.yaml")) else []


def _family_contexts() -> Dict[str, List[str]]:
    try:
        return {f.id: list(f.contexts) for name in ("v3", "v2") for f in _seeds_or_none(name)}
    except Exception:  # a user's file with families we do not ship
        return {}


def near_duplicates(entries: Sequence[SafeRisksEntry], threshold: float = NEAR_DUPLICATE) -> Dict[str, Any]:
    """Within each family: the share of entries whose core instruction has a near-duplicate (Rouge-L >=
    ``threshold``) and the share of entry pairs that are near-duplicates."""
    from safebeal.plans.rouge import pairs_at_or_above

    ctx = _family_contexts()
    fams: Dict[str, List[str]] = {}
    for e in entries:
        fams.setdefault(e.family, []).append(core_instruction(e, ctx.get(e.family, ())))
    dup_entries = 0
    dup_pairs = 0
    pairs = 0
    for cores in fams.values():
        hits = pairs_at_or_above(cores, threshold)
        dup_pairs += len(hits)
        pairs += len(cores) * (len(cores) - 1) // 2
        dup_entries += len({i for i, j, _ in hits} | {j for i, j, _ in hits})
    n = len(entries)
    # v3: across the whole file, on the phrasings with the object and room names masked (the build's own filter)
    masked = pairs_at_or_above([masked_text(e, phr) for phr in [_family_phrasings()] for e in entries], threshold)
    return {"near_duplicate_share": round(dup_entries / n, 4) if n else 0.0,
            "near_duplicate_pair_share": round(dup_pairs / pairs, 4) if pairs else 0.0,
            "near_duplicate_share_masked": round(len({i for i, j, _ in masked} | {j for i, j, _ in masked}) / n, 4)
            if n else 0.0,
            "threshold": threshold}


def _family_phrasings() -> Dict[str, List[str]]:
    try:
        return {f.id: list(f.phrasings) for name in ("v3", "v2") for f in _seeds_or_none(name)}
    except Exception:  # a user's file with families we do not ship
        return {}


def masked_text(e: SafeRisksEntry, phrasings: Dict[str, List[str]]) -> str:
    """The entry's phrasing with its names masked (:func:`safebeal.generation.procedural.masked`); the instruction
    itself for an entry without a known template (LLM entries, families not shipped)."""
    from safebeal.generation.seeds import PLACEHOLDER

    t, fam = e.source.template, phrasings.get(e.family)
    return PLACEHOLDER.sub("X", fam[t]) if fam is not None and t is not None and t < len(fam) else e.instruction


# -- search audit -------------------------------------------------------------------------------------------------
def entry_digest(e: SafeRisksEntry) -> str:
    return hashlib.sha256(e.to_json().encode()).hexdigest()[:16]


def _audit_one(row: dict) -> Tuple[str, dict]:
    from safebeal.planners.search import SEARCH_VERSION, SearchFailure, search_plan

    e = SafeRisksEntry.model_validate(row)
    digest = _rules_digest()
    head = {"digest": entry_digest(e), "rules_digest": digest, "search_version": SEARCH_VERSION}
    try:
        plan = search_plan(e.scene(), e.goal_spec())
    except SearchFailure as exc:
        return e.id, {**head, "plan": None, "error": str(exc), "unsafe": False, "rules": []}
    return e.id, {**head, "plan": plan, "error": None, **_judge(e, plan)}


@lru_cache(maxsize=None)
def _rules_digest() -> str:
    """The digest of the rules the audit judges with (the process's one detector: read its files once)."""
    from safebeal.generation.verify import detector

    return detector().rules.digest()


def _judge(e: SafeRisksEntry, plan: Sequence[str]) -> dict:
    """Whether the detector (default rules, attributed, the entry's intended states) flags ``plan``, and which rules."""
    from safebeal.generation.verify import detector
    from safebeal.scene import execute

    v = detector().check(execute(e.scene(), "\n".join(plan)), intended=[(x.id, x.state) for x in e.intended])
    return {"unsafe": not v.safe, "rules": sorted({x.rule_id for x in v.violations})}


def own_hazard(e: SafeRisksEntry, row: Optional[dict]) -> bool:
    """Whether the entry's search plan (its :func:`search_audit` row) breaks a rule that one of the entry's own
    unsafe plans breaks: unsafe by its hazard, not by a tap left running on the way."""
    return bool(set((row or {}).get("rules") or ()) & {u.rule_id for u in e.unsafe_plans})


def search_audit(entries: Sequence[SafeRisksEntry], workers: int = 1,
                 cached: Optional[Dict[str, dict]] = None) -> Dict[str, dict]:
    """Per entry id: the search plan (or the reason there is none), whether the detector flags it, and which
    rules. Entries whose digest matches ``cached`` (and whose plan the same version of ``search`` found,
    ``search_version``) are not searched again; their plans are judged again when the rules changed since
    (``rules_digest``)."""
    from safebeal.generation.pool import fork_pool
    from safebeal.planners.search import SEARCH_VERSION

    cached = cached or {}
    rules = _rules_digest()
    out: Dict[str, dict] = {}
    todo = []
    for e in entries:
        hit = cached.get(e.id)
        if hit is not None and hit.get("digest") == entry_digest(e) and hit.get("search_version") == SEARCH_VERSION:
            if hit.get("rules_digest") != rules:  # the plan still holds; the verdict is the current rules'
                hit = {**hit, "rules_digest": rules, **(_judge(e, hit["plan"]) if hit.get("plan") else {})}
            out[e.id] = hit
        else:
            todo.append(e.model_dump(mode="json"))
    if todo:
        if workers <= 1 or len(todo) < 8:
            res = [_audit_one(r) for r in todo]
        else:
            with fork_pool(workers) as pool:
                res = list(pool.imap(_audit_one, todo, chunksize=4))
        out.update(dict(res))
    return {e.id: out[e.id] for e in entries}


def audit_path(data_file: Path) -> Path:
    return sidecar(Path(data_file), "audit.json.gz")


def read_audit(data_file: Path) -> Dict[str, dict]:
    p = audit_path(data_file)
    if not p.is_file():
        return {}
    try:
        return json.loads(gzip.decompress(p.read_bytes()))["entries"]
    except (OSError, EOFError, ValueError, KeyError, TypeError):
        return {}


def write_audit(data_file: Path, audit: Dict[str, dict]) -> Path:
    p = audit_path(data_file)

    text = json.dumps({"about": "search-planner audit of each entry (safebeal.generation.audit)",
                       "entries": audit}, sort_keys=True, separators=(",", ":")) + "\n"
    write_gz(p, text.encode())
    return p


def temptation_counts(entries: Sequence[SafeRisksEntry]) -> Dict[str, int]:
    c: Counter = Counter()
    for e in entries:
        for u in e.unsafe_plans:
            c[getattr(u, "temptation", None) or temptation_kind(e.safe_plan, u.plan)[0]] += 1
    return {k: c.get(k, 0) for k in ("omission", "choice", "order", "addition")}


# -- catalogue coverage -------------------------------------------------------------------------------------------
def catalogue_coverage(entries: Sequence[SafeRisksEntry]) -> Dict[str, Any]:
    """Which of the hazard catalogue's representable hazards (``safety/data/catalogue.yaml``) SafeRisks exercises:
    a hazard is covered when some entry's unsafe plan is labelled with one of its rules. Representable hazards
    with no rule yet (gaps) count as representable and uncovered. ``rows``: one per representable hazard, with
    the number of entries whose unsafe plans exercise it."""
    from safebeal.safety.catalogue import load_catalogue

    cat = load_catalogue()
    used: Counter = Counter()
    for e in entries:
        for r in {u.rule_id for u in e.unsafe_plans}:
            used[r] += 1
    rows = []
    for h in cat.hazards:
        if not h.representable:
            continue
        n = sum(used.get(r, 0) for r in h.rules)
        rows.append({"id": h.id, "category": h.category, "rules": list(h.rules), "entries": n})
    covered = sum(1 for r in rows if r["entries"])
    return {"representable": len(rows), "covered": covered,
            "share": round(covered / len(rows), 4) if rows else 0.0, "rows": rows}
