"""The SafeRisks audit as Markdown for docs/saferisks.md: the stats contract per category, the catalogue coverage
table, and random entries in full (instruction, observation, safe plan, unsafe plan).

    python scripts/docs/saferisks_v2_report.py [--entries 10] [--seed 0] > /tmp/report.md

Reads the shipped file and its search audit sidecar (`safebeal saferisks build --audit` writes it); entries
missing from the sidecar are searched now.
"""

from __future__ import annotations

import argparse
import random

from safebeal.datasets.base import DATASETS
from safebeal.datasets.saferisks import DATA_FILE
from safebeal.generation.audit import catalogue_coverage, read_audit, search_audit
from safebeal.generation.build import stats
from safebeal.planners.prompts import observation_text
from safebeal.safety.taxonomy import SLUGS


def pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=10, help="random entries shown in full")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    ds = DATASETS.create("saferisks")
    entries = ds.entries()
    audit = search_audit(entries, workers=2, cached=read_audit(DATA_FILE))
    st = stats(entries, audit=audit)
    print(f"**{st['entries']} entries**, {st['families']} families, **{st['homes']} homes** (largest share "
          f"{pct(st['max_home_share'])}), near-duplicate share (whole instruction, Rouge-L >= 0.7 with another of "
          f"its family after the opener and context are removed) **{pct(st['near_duplicate_share'])}** "
          f"(pairs {pct(st['near_duplicate_pair_share'])}); search plans unsafe overall "
          f"{pct(st['search_unsafe_share'])}; temptations {st['temptation']}; splits {st['per_split']}.\n")
    print("| category | entries | families | test families | search unsafe | ... in this category | no plan |")
    print("|---|---|---|---|---|---|---|")
    for c in SLUGS:
        r = st["per_category"][c]
        print(f"| {c} | {r['entries']} | {r['families']} | {r['families_test']} | {pct(r['search_unsafe_share'])} | "
              f"{pct(r.get('search_unsafe_in_category_share'))} | {pct(r.get('search_no_plan_share'))} |")
    cov = catalogue_coverage(entries)
    print(f"\n**Catalogue coverage:** {cov['covered']} of the catalogue's {cov['representable']} representable hazards "
          f"({pct(cov['share'])}) have an entry whose unsafe plan breaks one of their rules.\n")
    print("| hazard | category | rules | entries |")
    print("|---|---|---|---|")
    for r in cov["rows"]:
        rules = ", ".join(f"`{x}`" for x in r["rules"]) or "(no rule yet)"
        print(f"| `{r['id']}` | {r['category']} | {rules} | {r['entries'] or '**none**'} |")
    rng = random.Random(args.seed)
    print(f"\n### {args.entries} random entries (seed {args.seed})\n")
    tasks = {t.id: t for t in ds.tasks()}
    for e in rng.sample(entries, min(args.entries, len(entries))):
        t = tasks[e.id]
        u = e.unsafe_plans[0]
        print(f"#### `{e.id}` ({', '.join(e.categories)}; {e.split}; {e.environment.base})\n")
        print(f"- **Instruction:** {e.instruction}")
        print(f"- **Hazard:** {e.hazard}")
        if e.intended:
            print(f"- **Intended states:** {', '.join(f'{x.id} {x.state}' for x in e.intended)}")
        print(f"- **Unsafe plan:** `{u.rule_id}`, {u.temptation or 'undeclared'} at step {u.diverge_step}: {u.note}\n")
        print("Observation:\n\n```\n" + observation_text(t) + "\n```\n")
        print("Safe plan:\n\n```\n" + "\n".join(e.safe_plan) + "\n```\n")
        print("Unsafe plan:\n\n```\n" + "\n".join(u.plan) + "\n```\n")


if __name__ == "__main__":
    main()
