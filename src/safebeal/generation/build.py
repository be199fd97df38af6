"""Build, validate and describe the SafeRisks file.

    build(seed=0)          # procedural families (+ the LLM generator if given a backend) -> saferisks.jsonl.gz
    validate(entries)      # re-verify every entry from its own data, and every instruction pair's Rouge-L
    stats(entries, out)    # counts, and PNGs of the category distribution and the 20 most frequent objects

Beside the output file the build writes ``<name>.rejections.jsonl.gz`` (every rejected candidate with its
reason) and ``<name>.build.json`` (counts per category and family, the Rouge-L threshold and the
distribution of each instruction's nearest-neighbour Rouge-L). All three are deterministic for a seed.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from safebeal.datasets.saferisks import DATA_FILE, SafeRisksEntry, dump_entries
from safebeal.errors import SafebealError
from safebeal.generation.files import sidecar, write_gz
from safebeal.generation.pool import fork_pool
from safebeal.generation.audit import masked_text
from safebeal.generation.procedural import FamilyResult, Rejection, generate_family, held_out_families, masked
from safebeal.generation.split import pattern_split
from safebeal.plans.rouge import pairs_at_or_above
from safebeal.generation.seeds import Common, HazardSeed, load_common, load_seeds, seed_set
from safebeal.generation.verify import Problem, validity_counts, verify_entry
from safebeal.safety.taxonomy import SLUGS

ROUGE_BINS = (0.0, 0.5, 0.6, 0.65, 0.7, 1.01)


def _write_gz_jsonl(path: Path, rows: Iterable[dict]) -> None:
    write_gz(path, "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows).encode())


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


# -- procedural ------------------------------------------------------------------------------------------------
def _family_job(args: Tuple[HazardSeed, Common, int, Optional[int], FrozenSet[int]]) -> FamilyResult:
    fam, common, seed, count, skip = args
    return generate_family(fam, common, seed, target=count, skip_templates=skip)


def clashing_templates(families: Sequence[HazardSeed], threshold: float) -> Dict[str, FrozenSet[int]]:
    """v3 (``mask_names``): per family, the phrasings whose masked form (:func:`procedural.masked`) is a
    near-duplicate (Rouge-L >= ``threshold``) of a phrasing of an earlier family (file order). The family never
    draws them, so the cross-family filter has nothing left to drop and the family fills its count with requests
    of its own. Depends on the seed files only: a subset of families regenerates as in the full build."""
    rows = [(f.id, t, masked(p)) for f in families for t, p in enumerate(f.phrasings)]
    order = {f.id: k for k, f in enumerate(families)}
    out: Dict[str, Set[int]] = {f.id: set() for f in families}
    for i, j, _ in pairs_at_or_above([r[2] for r in rows], threshold):
        a, b = rows[i], rows[j]
        if a[0] != b[0]:
            later = b if order[b[0]] > order[a[0]] else a
            out[later[0]].add(later[1])
    return {k: frozenset(v) for k, v in out.items()}


def run_families(families: Sequence[HazardSeed], common: Common, seed: int, workers: int = 1,
                 count: Optional[int] = None, skip: Optional[Dict[str, FrozenSet[int]]] = None) -> List[FamilyResult]:
    jobs = [(f, common, seed, count, (skip or {}).get(f.id, frozenset())) for f in families]
    if workers <= 1 or len(jobs) <= 1:
        return [_family_job(j) for j in jobs]
    # longest first would balance better, but imap keeps the order; chunks of one family balance well enough
    with fork_pool(workers) as pool:
        return list(pool.imap(_family_job, jobs, chunksize=1))


def cross_family_dedup(entries: List[SafeRisksEntry], threshold: float,
                       phrasings: Optional[Dict[str, List[str]]] = None) -> Tuple[List[SafeRisksEntry], List[Rejection]]:
    """Drop the later entry of every cross-family pair at or above ``threshold`` (families are checked within
    themselves as they are generated). With ``phrasings`` (family id -> phrasings; v3's ``mask_names``), pairs are
    judged on the masked phrasings (:func:`masked_text`)."""
    texts = [e.instruction if phrasings is None else masked_text(e, phrasings) for e in entries]
    pairs = pairs_at_or_above(texts, threshold)
    dropped: Dict[int, Tuple[int, float]] = {}
    for i, j, s in sorted(pairs):
        if i in dropped or j in dropped:
            continue
        if entries[i].family == entries[j].family:  # cannot happen for procedural entries
            continue
        dropped[j] = (i, s)
    kept = [e for k, e in enumerate(entries) if k not in dropped]
    rej = [Rejection(entries[j].family, -1, "duplicate",
                     f"Rouge-L {s:.3f} >= {threshold}{' (names masked)' if phrasings is not None else ''} with "
                     f"{entries[i].id} ({entries[i].instruction!r})",
                     entries[j].instruction, entries[j].id) for j, (i, s) in sorted(dropped.items())]
    return kept, rej


@dataclass
class BuildReport:
    out: Path
    entries: List[SafeRisksEntry]
    rejections: List[Rejection]
    summary: Dict[str, Any] = field(default_factory=dict)


def build(seed: int = 0, out: Path | str = DATA_FILE, family_ids: Optional[Sequence[str]] = None,
          workers: Optional[int] = None, seed_paths: Optional[Sequence[Path | str]] = None,
          llm_backend: Any = None, rounds: int = 0, per_agent: int = 3, write: bool = True,
          count: Optional[int] = None, seeds: str = "v2") -> BuildReport:
    """Generate, deduplicate, split and (``write``) save SafeRisks. ``llm_backend``: a backend spec or object
    for the multi-agent generator (``rounds`` rounds); its entries follow the procedural ones. ``count``:
    entries per family (default: each family's own, else ``common.yaml``'s). ``seeds``: the seed set
    (:data:`~safebeal.generation.seeds.SEED_SETS`: ``v2``, the shipped file's, or ``v3``, being written)."""
    out = Path(out)
    common = load_common(seed_set(seeds)[0])
    all_fams = load_seeds(seed_paths, common=common, seeds=seeds)
    fams = all_fams
    if family_ids is not None:
        known = {f.id for f in all_fams}
        unknown = [f for f in family_ids if f not in known]
        if unknown:
            raise SafebealError(f"unknown family id(s) {unknown}")
        fams = [f for f in all_fams if f.id in set(family_ids)]
    skip = clashing_templates(all_fams, common.rouge_threshold) if common.mask_names else None
    results = run_families(fams, common, seed, workers if workers is not None else default_workers(), count, skip)
    entries = [e for r in results for e in r.entries]
    rejections = [x for r in results for x in r.rejections]
    entries, dup = cross_family_dedup(entries, common.rouge_threshold,
                                      {f.id: f.phrasings for f in all_fams} if common.mask_names else None)
    rejections += dup
    if common.split == "pattern":  # v3: by hazard pattern, over what was built
        test = pattern_split(entries, all_fams, common.test_fraction, common.test_patterns_min)
    else:
        test = set(held_out_families(all_fams, common.test_fraction, common.test_families_min))
    for e in entries:
        e.split = "test" if e.family in test else "train"
    llm_summary = None
    if llm_backend is not None and rounds > 0:
        from safebeal.generation.multiagent import MultiAgentGenerator

        gen = MultiAgentGenerator(llm_backend, common=common, seeds=all_fams, rounds=rounds, per_agent=per_agent,
                                  admitted=[e.instruction for e in entries])
        res = gen.run()
        entries += res.entries
        rejections += [Rejection(r.family, r.attempt, r.kind, r.message, r.instruction) for r in res.rejections]
        llm_summary = res.summary()
    summary = describe(entries, common.rouge_threshold)
    summary.update({"seed": seed, "families": len(fams), "rejections": dict(Counter(r.kind for r in rejections))})
    if seeds != "v2":  # the shipped v2 file's summary stays byte-identical
        summary["seeds"] = seeds
    if count is not None:
        summary["count"] = count
    if llm_summary is not None:
        summary["llm"] = llm_summary
    if write:
        dump_entries(entries, out)
        _write_gz_jsonl(sidecar(out, "rejections.jsonl.gz"), (r.to_dict() for r in rejections))
        sidecar(out, "build.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return BuildReport(out, entries, rejections, summary)


def nearest_neighbour_hist(texts: Sequence[str], floor: float = 0.5) -> Dict[str, int]:
    """How many instructions have their highest Rouge-L with another instruction in each bin."""
    best = [0.0] * len(texts)
    for i, j, s in pairs_at_or_above(texts, floor):
        best[i] = max(best[i], s)
        best[j] = max(best[j], s)
    hist: Dict[str, int] = {}
    for lo, hi in zip(ROUGE_BINS, ROUGE_BINS[1:]):
        label = f"[{lo:.2f},{min(hi, 1.0):.2f}{']' if hi > 1 else ')'}"
        hist[label] = sum(1 for b in best if lo <= b < hi)
    return hist


def describe(entries: Sequence[SafeRisksEntry], threshold: float) -> Dict[str, Any]:
    per_cat = {c: 0 for c in SLUGS}
    fam_cat: Dict[str, Counter] = {c: Counter() for c in SLUGS}
    templates = set()
    for e in entries:
        for c in e.categories:
            per_cat[c] += 1
            fam_cat[c][e.family] += 1
        if e.source.kind == "procedural":
            templates.add((e.family, e.source.template))
        else:
            templates.add((e.family, e.instruction))
    dominance = {c: (round(max(fc.values()) / sum(fc.values()), 3) if fc else 0.0) for c, fc in fam_cat.items()}
    return {
        "entries": len(entries),
        "per_category": per_cat,
        "per_split": dict(Counter(e.split for e in entries)),
        "per_source": dict(Counter(e.source.kind for e in entries)),
        "families": len({e.family for e in entries}),
        "templates": len(templates),
        "max_family_share_per_category": dominance,
        "rouge_threshold": threshold,
        "nearest_neighbour_rouge_l": nearest_neighbour_hist([e.instruction for e in entries]),
    }


# -- validation ------------------------------------------------------------------------------------------------
def _validate_job(rows: List[dict]) -> List[Tuple[str, List[dict]]]:
    out = []
    for row in rows:
        e = SafeRisksEntry.model_validate(row)
        out.append((e.id, [p.to_dict() for p in verify_entry(e)]))
    return out


def validate(entries: Sequence[SafeRisksEntry], workers: Optional[int] = None,
             threshold: Optional[float] = None) -> Dict[str, Any]:
    """Re-verify every entry (materialise, run both plans, goal, detector) and every instruction pair.

    Returns the :func:`~safebeal.generation.verify.validity_counts` counts plus ``problems_by_entry`` and
    ``rouge`` (threshold, pairs at or above it)."""
    workers = workers if workers is not None else default_workers()
    rows = [e.model_dump(mode="json") for e in entries]
    if workers <= 1 or len(rows) < 8:
        pairs = _validate_job(rows)
    else:
        n = max(1, len(rows) // (workers * 8))
        chunks = [rows[i:i + n] for i in range(0, len(rows), n)]
        with fork_pool(workers) as pool:
            pairs = [x for part in pool.imap(_validate_job, chunks) for x in part]
    results = {eid: [Problem(**p) for p in probs] for eid, probs in pairs}
    common = load_common()
    thr = threshold if threshold is not None else common.rouge_threshold
    close = pairs_at_or_above([e.instruction for e in entries], thr)
    if common.dedup_core:
        # as the build admits them: across families the whole instructions, within a family the core
        # instructions (opener and context sentence removed), which is the stricter test of variety
        from safebeal.generation.audit import _family_contexts, core_instruction

        close = [(i, j, s) for i, j, s in close if entries[i].family != entries[j].family]
        ctx = _family_contexts()
        by_family: Dict[str, List[int]] = {}
        for k, e in enumerate(entries):
            by_family.setdefault(e.family or e.id, []).append(k)
        for fam, idx in by_family.items():
            cores = [core_instruction(entries[k], ctx.get(fam, ())) for k in idx]
            close += [(idx[i], idx[j], s) for i, j, s in pairs_at_or_above(cores, thr)]
    for i, j, s in close:
        results.setdefault(entries[j].id, []).append(
            Problem("duplicate", f"instruction Rouge-L {s:.3f} >= {thr} with {entries[i].id}"))
    seen: Dict[str, int] = {}
    for k, e in enumerate(entries):
        if e.id in seen:
            results.setdefault(e.id, []).append(Problem("parse", f"duplicate id (also entry #{seen[e.id]})"))
        seen[e.id] = k
    summary = validity_counts(results, entries)
    summary["rouge"] = {"threshold": thr, "pairs_at_or_above": len(close)}
    summary["problems_by_entry"] = {k: [p.to_dict() for p in v] for k, v in results.items() if v}
    return summary


# -- stats -----------------------------------------------------------------------------------------------------
def object_counts(entries: Sequence[SafeRisksEntry]) -> Counter:
    """How many entries list each object class (rooms left out)."""
    c: Counter = Counter()
    rooms = {"bathroom", "bedroom", "dining_room", "home_office"}
    for e in entries:
        for cls in {cls for cls, _ in e.objects if cls not in rooms}:
            c[cls] += 1
    return c


def stats(entries: Sequence[SafeRisksEntry], out_dir: Optional[Path | str] = None,
          audit: Optional[Dict[str, dict]] = None, generic: Optional[Dict[str, dict]] = None) -> Dict[str, Any]:
    """Counts, homes, near-duplicates, temptation kinds and (with ``audit``, see
    :func:`safebeal.generation.audit.search_audit`) the share per category of entries whose shortest plan to the
    goal is unsafe. ``per_category[c]``: ``entries``, ``families``, ``families_test``, ``search_unsafe_share``
    (None without an audit; with one also ``search_no_plan_share``, ``search_unsafe_in_category_share`` and
    ``search_own_hazard_share``: the shortest plan breaks a rule the entry's own unsafe plans break), and the
    hazard patterns (:func:`safebeal.generation.audit.pattern_of`): ``patterns``,
    ``max_pattern_share``, ``test_patterns``; over the whole file ``patterns`` and ``test_patterns_in_train``. With
    ``generic`` (:func:`safebeal.generation.generic_rule.generic_rule_results` of the test entries):
    ``generic_rule_ssr_test``, overall and per category (None without it, or without test entries)."""
    from safebeal.generation.audit import (catalogue_coverage, home_of, near_duplicates, own_hazard, pattern_stats,
                                           temptation_counts)
    from safebeal.generation.generic_rule import generic_rule_ssr

    def generic_ssr(es: Sequence[SafeRisksEntry]) -> Optional[float]:
        """The generic rule's safe success rate over the test entries of ``es`` (None: not computed, or none)."""
        if generic is None:
            return None
        return generic_rule_ssr({e.id: generic[e.id] for e in es if e.split == "test" and e.id in generic})

    per_cat = Counter(c for e in entries for c in e.categories)
    objs = object_counts(entries)
    homes = Counter(home_of(e) for e in entries)
    n = len(entries)
    cats: Dict[str, Dict[str, Any]] = {}
    rule_cat: Dict[str, str] = {}
    if audit is not None:
        from safebeal.generation.verify import detector

        rule_cat = {r.id: r.category for r in detector().rules.rules}
    pats = pattern_stats(entries)
    for c in SLUGS:
        es = [e for e in entries if c in e.categories]
        row: Dict[str, Any] = {"entries": per_cat.get(c, 0), "families": len({e.family for e in es}),
                               "families_test": len({e.family for e in es if e.split == "test"}),
                               "search_unsafe_share": None}
        row.update(pats["per_category"].get(c, {"patterns": 0, "max_pattern_share": 0.0, "test_patterns": 0}))
        row["generic_rule_ssr_test"] = generic_ssr(es)
        if audit is not None and es:
            judged = [audit[e.id] for e in es if e.id in audit]
            row["search_unsafe_share"] = round(sum(1 for a in judged if a["unsafe"]) / len(es), 4)
            row["search_no_plan_share"] = round(sum(1 for a in judged if a["plan"] is None) / len(es), 4)
            # stricter: the shortest plan breaks a rule of this category (not, say, a fridge left open elsewhere)
            row["search_unsafe_in_category_share"] = round(
                sum(1 for a in judged if any(rule_cat.get(r) == c for r in a["rules"])) / len(es), 4)
            # strictest: it breaks a rule the entry's own unsafe plans break (its hazard, not a tap left running)
            row["search_own_hazard_share"] = round(sum(1 for e in es if own_hazard(e, audit.get(e.id))) / len(es), 4)
        cats[c] = row
    dup = near_duplicates(entries)
    info = {"entries": n, "homes": len(homes), "max_home_share": round(max(homes.values()) / n, 4) if n else 0.0,
            "per_category": cats, "near_duplicate_share": dup["near_duplicate_share"],
            "near_duplicate_pair_share": dup["near_duplicate_pair_share"],
            "near_duplicate_share_masked": dup["near_duplicate_share_masked"],
            "temptation": temptation_counts(entries),
            "search_unsafe_share": (round(sum(1 for e in entries if audit.get(e.id, {}).get("unsafe")) / n, 4)
                                    if audit is not None and n else None),
            "search_own_hazard_share": (round(sum(1 for e in entries if own_hazard(e, audit.get(e.id))) / n, 4)
                                        if audit is not None and n else None),
            "catalogue_coverage": {k: v for k, v in catalogue_coverage(entries).items() if k != "rows"},
            "top_objects": objs.most_common(20), "per_split": dict(Counter(e.split for e in entries)),
            "families": len({e.family for e in entries}),
            "patterns": pats["patterns"], "test_patterns_in_train": pats["test_patterns_in_train"],
            "generic_rule_ssr_test": generic_ssr(entries)}
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4))
        cats = list(SLUGS)
        ax.bar(cats, [per_cat.get(c, 0) for c in cats], color="#c0504d")
        ax.set_ylabel("entries")
        ax.set_title(f"SafeRisks: {len(entries)} entries by hazard category")
        ax.tick_params(axis="x", rotation=35)
        fig.tight_layout()
        p1 = out / "saferisks_categories.png"
        fig.savefig(p1, dpi=120)
        plt.close(fig)
        top = objs.most_common(20)
        fig, ax = plt.subplots(figsize=(8, 5))
        ax.barh([k for k, _ in reversed(top)], [v for _, v in reversed(top)], color="#4f81bd")
        ax.set_xlabel("entries listing the object")
        ax.set_title("20 most frequent objects")
        fig.tight_layout()
        p2 = out / "saferisks_objects.png"
        fig.savefig(p2, dpi=120)
        plt.close(fig)
        info["figures"] = [str(p1), str(p2)]
    return info
