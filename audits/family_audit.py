"""Audit SafeRisks seed families as SafeRisks v2 builds them (docs/design/saferisks_v2.md), one row per family.

    python audits/family_audit.py src/safebeal/generation/data/seeds/slip_trip_fall.yaml [--family ID] [--count 12]

For each family: entries generated over the procedural homes (v2 settings: homes 0..29, a tenth in the apartment,
deduplication on the core instruction), rejections by kind, declared temptation kinds, the share of same-family
core pairs that are near-duplicates (target: under 10%), and the search audit: the share of entries whose
hazard-blind shortest plan breaks a rule of the family's category (target: at least 70% per category), with the
rules it broke. Exits 1 when a family generates nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="seed YAML files")
    ap.add_argument("--family", action="append", default=[], help="only these family ids (repeatable)")
    ap.add_argument("--count", type=int, default=12, help="entries per family (default 12)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--v1", action="store_true", help="v1 settings (apartment bases only, whole-text dedup)")
    ap.add_argument("--show", type=int, default=1, help="print this many entries per family in full")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)

    from safebeal.generation.audit import near_duplicates, search_audit
    from safebeal.generation.procedural import generate_family
    from safebeal.generation.seeds import load_common, load_seed_file
    from safebeal.generation.verify import detector

    common = load_common()
    if not args.v1:
        common.homes, common.apartment_share, common.dedup_core = list(range(30)), 0.1, True
    rule_cat = {r.id: r.category for r in detector().rules.rules}
    bad = 0
    cat_rows: dict = {}
    for f in args.files:
        for fam in load_seed_file(f).families:
            if args.family and fam.id not in args.family:
                continue
            t0 = time.perf_counter()
            res = generate_family(fam, common, seed=args.seed, target=args.count)
            es = res.entries
            rej = Counter(r.kind for r in res.rejections)
            if not es:
                bad += 1
                print(f"\n## {fam.id}: NO ENTRIES; rejections {dict(rej)}")
                for r in res.rejections[:5]:
                    print(f"   - {r.kind}: {r.message}")
                continue
            audit = search_audit(es, workers=args.workers)
            in_cat = sum(1 for e in es if any(rule_cat.get(r) == fam.category for r in audit[e.id]["rules"]))
            any_unsafe = sum(1 for e in es if audit[e.id]["unsafe"])
            no_plan = sum(1 for e in es if audit[e.id]["plan"] is None)
            rules = Counter(r for e in es for r in audit[e.id]["rules"])
            dup = near_duplicates(es)
            tempt = Counter(u.temptation or "undeclared" for e in es for u in e.unsafe_plans)
            homes = Counter(e.environment.base for e in es)
            row = cat_rows.setdefault(fam.category, [0, 0, 0])
            row[0] += len(es)
            row[1] += in_cat
            row[2] += any_unsafe
            print(f"\n## {fam.id} ({fam.category}): {len(es)}/{args.count} entries in {time.perf_counter() - t0:.1f} s,"
                  f" {len(homes)} bases; rejections {dict(rej)}")
            print(f"   search unsafe in category {in_cat}/{len(es)} = {in_cat / len(es):.0%}; any rule"
                  f" {any_unsafe / len(es):.0%}; no plan {no_plan}; rules {dict(rules)}")
            print(f"   core near-duplicate pairs {dup['near_duplicate_pair_share']:.0%};"
                  f" phrasings {len(fam.phrasings)}; temptations {dict(tempt)}")
            for r in res.rejections[:3]:
                print(f"   rejected ({r.kind}): {r.message}")
            for e in es[: args.show]:
                a = audit[e.id]
                print(f"   e.g. {e.id} [{e.environment.base}] {e.instruction}")
                print(f"        hazard: {e.hazard}")
                print(f"        search plan: {a['plan'] if a['plan'] is not None else a['error']}")
    if cat_rows:
        print("\n## per category (this run)")
        for c, (n, inc, anyu) in sorted(cat_rows.items()):
            print(f"   {c}: {n} entries, search unsafe in category {inc / n:.0%}, any {anyu / n:.0%}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
