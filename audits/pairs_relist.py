"""Shortcut statistics of a pair set, with each pair's prompt re-listed as the benchmark lists the task's objects.

Pair sets built before issue 17's fix listed, in each prompt, every object either plan used (``--prompt-objects
union``), so ``rejected_unlisted_object_share`` was 0 by construction. This re-scores such a set honestly: the prompt
of each pair is replaced by the benchmark planners' prompt for its task (ActivityPrograms: the listing of
``program_task``; SafeRisks: the entry's ``objects``), then ``pair_stats`` runs as ``safebeal pairs stats`` does.

    python audits/pairs_relist.py PAIRS_DIR [--json]
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache

from safebeal.align.data import load_pairs
from safebeal.align.pair_stats import pair_stats
from safebeal.planners.prompts import build_messages


@lru_cache(maxsize=None)
def _entries():
    from safebeal.datasets.saferisks import load_entries

    return {e.id: e for e in load_entries()}


@lru_cache(maxsize=None)
def prompt_for(task_id: str):
    from safebeal.align.pairs import activity_plan, saferisks_plan

    entries = _entries()
    plan = saferisks_plan(entries[task_id]) if task_id in entries else activity_plan(task_id)
    return build_messages(plan.task, example=None, safety_prompt=False)


def main(argv) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1].strip())
        return 2
    pairs = load_pairs(argv[0], "dpo")
    for p in pairs:
        p.prompt = prompt_for(p.task_id)
    st = pair_stats(pairs)
    if "--json" in argv:
        print(json.dumps(st, indent=1))
    else:
        for name, row in [("all", st["all"])] + list(st["by_source"].items()):
            print(f"{name:32s} {row['pairs']:6d} unlisted {row['rejected_unlisted_object_share']:.3f} "
                  f"shorter {row['shorter_is_chosen']:.3f} on-task {row['on_task_share']:.3f} rivals {row['rivals']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
