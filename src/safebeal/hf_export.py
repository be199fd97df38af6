"""Hugging Face exports: SafeRisks and the preference pairs as folders that ``datasets.load_dataset(DIR)`` loads,
each with a dataset card (README.md with YAML metadata) ready for ``push_to_hub`` to the user's own account.

Layout of an export::

    DIR/README.md            the card: YAML (license, configs with the split files, features), then the prose
    DIR/data/<split>.parquet one file per split

``safebeal dataset export saferisks --format hf --out DIR`` and ``safebeal pairs export PAIRS --out DIR``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

from safebeal.errors import SafebealError

SAFERISKS_NAMES = ("saferisks", "saferisks-train", "saferisks-test")


def _datasets():
    try:
        import datasets
    except ImportError:
        raise SafebealError("the Hugging Face export needs the 'datasets' package: pip install 'safebeal[inspect]'") from None
    datasets.disable_progress_bars()
    return datasets


def _size_category(n: int) -> str:
    for bound, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < bound:
            return name
    return "100K<n<1M"


def _write(out: Path, splits: Dict[str, List[Dict[str, Any]]], features: Any) -> Dict[str, int]:
    """One parquet file per split under ``out/data``; returns the row counts."""
    datasets = _datasets()
    (out / "data").mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, rows in splits.items():
        ds = datasets.Dataset.from_list(rows, features=features)
        ds.to_parquet(str(out / "data" / f"{split}.parquet"))
        counts[split] = len(rows)
    return counts


def _card(meta: Dict[str, Any], body: str) -> str:
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n\n" + body.strip() + "\n"


def _features_yaml(features: Any) -> List[Dict[str, Any]]:
    """The card's ``dataset_info.features``, in the Hub's YAML form, from :class:`datasets.Features`."""
    return features._to_yaml_list()


def _push_section(default_repo: str) -> str:
    return f"""## Upload to your own Hugging Face account

```bash
huggingface-cli login   # or: export HF_TOKEN=...
python -c "import datasets; datasets.load_dataset('DIR').push_to_hub('YOUR_USER/{default_repo}', private=True)"
huggingface-cli upload YOUR_USER/{default_repo} DIR . --repo-type dataset   # keeps this card as the README
```

`push_to_hub` writes the data (and a generated card); the `huggingface-cli upload` line uploads this folder as it is,
card included. Replace `DIR` with this folder and `YOUR_USER` with your account or organisation.
"""


# -- SafeRisks ------------------------------------------------------------------------------------------------
def saferisks_features():
    datasets = _datasets()
    s = datasets.Value("string")
    return datasets.Features({
        "id": s, "instruction": s, "categories": datasets.Sequence(s), "hazard": s, "family": s, "split": s,
        "source": s,
        "safe_plan": datasets.Sequence(s),
        "unsafe_plans": [{"plan": datasets.Sequence(s), "rule_id": s, "category": s, "note": s, "temptation": s,
                          "diverge_step": datasets.Value("int64")}],
        "objects": [{"name": s, "id": datasets.Value("int64")}],
        "intended": [{"id": datasets.Value("int64"), "state": s}],
        "goal": s, "environment": s,
    })


def saferisks_row(e: Any) -> Dict[str, Any]:
    """One SafeRisks entry as an export row: scene diff and goal as JSON text (their shape varies by entry)."""
    d = e.model_dump(mode="json")
    return {
        "id": d["id"], "instruction": d["instruction"], "categories": d["categories"], "hazard": d["hazard"],
        "family": d["family"], "split": d["split"], "source": json.dumps(d["source"], ensure_ascii=False, sort_keys=True),
        "safe_plan": d["safe_plan"],
        "unsafe_plans": [{"plan": u["plan"], "rule_id": u.get("rule_id"), "category": u.get("category"),
                          "note": u.get("note"), "temptation": u.get("temptation"),
                          "diverge_step": u.get("diverge_step")} for u in d["unsafe_plans"]],
        "objects": [{"name": n, "id": i} for n, i in d["objects"]],
        "intended": [{"id": x["id"], "state": x["state"]} for x in d.get("intended") or []],
        "goal": json.dumps(d["goal"], ensure_ascii=False, sort_keys=True),
        "environment": json.dumps(d["environment"], ensure_ascii=False, sort_keys=True),
    }


def export_saferisks(name: str, out: Path | str, path: Optional[Path | str] = None) -> Dict[str, int]:
    """Write SafeRisks (``saferisks``: both splits; ``saferisks-train`` / ``-test``: one) to ``out`` as a Hugging
    Face dataset folder with its card. Returns the rows per split."""
    from safebeal.datasets.saferisks import DATA_FILE, load_entries

    if name not in SAFERISKS_NAMES:
        raise SafebealError(f"dataset {name!r} cannot be exported; use one of {', '.join(SAFERISKS_NAMES)}")
    entries = load_entries(path)
    if name != "saferisks":
        entries = [e for e in entries if e.split == name.split("-", 1)[1]]
    if not entries:
        raise SafebealError(f"{path or DATA_FILE}: no entries for {name}")
    out = Path(out)
    splits: Dict[str, List[Dict[str, Any]]] = {}
    for e in entries:
        splits.setdefault(e.split, []).append(saferisks_row(e))
    feats = saferisks_features()
    counts = _write(out, dict(sorted(splits.items(), key=lambda kv: kv[0] != "train")), feats)
    cats = Counter(c for e in entries for c in e.categories)
    sources = Counter(e.source.kind for e in entries)
    meta = {
        "license": "mit",
        "pretty_name": "SafeRisks",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["embodied-ai", "safety", "task-planning", "virtualhome", "safebeal"],
        "size_categories": [_size_category(len(entries))],
        "configs": [{"config_name": "default",
                     "data_files": [{"split": s, "path": f"data/{s}.parquet"} for s in counts]}],
        "dataset_info": {"features": _features_yaml(feats)},
    }
    split_rows = "\n".join(f"| {s} | {n} |" for s, n in counts.items())
    cat_rows = "\n".join(f"| {c} | {n} |" for c, n in sorted(cats.items()))
    body = f"""# SafeRisks ({name})

Household tasks whose obvious plan is hazardous, for measuring and training the safety of LLM task planners in the
VirtualHome simulator (SafePlan-Bench, in the safebeal framework). Each entry has an instruction, a home
(a VirtualHome scene with a few objects added or moved), a goal the simulator checks, a safe plan that reaches it
and one or more unsafe plans that also reach it but trip a safety rule.

Exported by `safebeal dataset export {name} --format hf` from `{Path(path or DATA_FILE).name}`.

## Splits

| split | entries |
|---|---|
{split_rows}

The split is by task family: no family has entries in both splits.

## Hazard categories

An entry can have several.

| category | entries |
|---|---|
{cat_rows}

Sources: {", ".join(f"{k} {v}" for k, v in sorted(sources.items()))}.

## Features

| column | type | what it is |
|---|---|---|
| `id` | string | entry id, `<family>/<index>` |
| `instruction` | string | the request, as a user would say it |
| `categories` | list of string | hazard categories the entry exercises |
| `hazard` | string | the hazard in words |
| `family` | string | the task family (near-duplicate entries share it; the split is by family) |
| `split` | string | `train` or `test` |
| `source` | string (JSON) | how the entry was made (procedural seed or LLM role agents) |
| `safe_plan` | list of string | a plan that reaches the goal safely, one `[ACTION] <object> (id)` per line |
| `unsafe_plans` | list of struct | plans that reach the goal and trip `rule_id` (category, note, temptation, step where it diverges) |
| `objects` | list of struct | the (name, id) objects a planner's prompt lists |
| `intended` | list of struct | (id, STATE) states the request itself asks for: not counted as hazards at the end |
| `goal` | string (JSON) | the goal in VirtualHome's form: `{{"goal": [{{"id", "state"}} or {{"from_id", "relation_type", "to_id"}}], "actions": [...]}}` |
| `environment` | string (JSON) | the home: a base VirtualHome scene and the diff (objects added, moved, states set) |

`goal` and `environment` are JSON text because their shape varies from entry to entry; `json.loads` them.

## How it was built

Procedural seeds (task families with roles, temptations and placements) materialised in VirtualHome homes; every
entry was verified in the simulator: the safe plan runs, reaches the goal and trips no rule of safebeal's hazard
detector, each unsafe plan runs, reaches the goal and trips its rule; near-duplicate instructions (Rouge-L) were
rejected. See `docs/saferisks.md` in safebeal for the generator, the rules and the audit.

## Intended use

Evaluating (SafePlan-Bench: `safebeal bench --dataset {name}` or `inspect eval safebeal/saferisks-test`) and training
(safe vs unsafe plan pairs) household task planners for safety. The plans are symbolic VirtualHome scripts: a safe
plan here is safe under safebeal's rules in the simulator, not a guarantee about a physical robot. Not for judging
people or real homes.

## Load

```python
import datasets
ds = datasets.load_dataset("DIR")   # this folder, or YOUR_USER/saferisks once uploaded
```

To rebuild safebeal's task from a row: `safebeal.datasets.saferisks.parse_entry` over the row with `goal`,
`environment` and `source` parsed back from JSON.

## License

MIT, as safebeal. The scenes derive from VirtualHome's (the `virtualhome-eval` package, MIT).

{_push_section("saferisks")}"""
    (out / "README.md").write_text(_card(meta, body), encoding="utf-8")
    return counts


# -- preference pairs -----------------------------------------------------------------------------------------
def export_pairs(data: Path | str, out: Path | str) -> Dict[str, int]:
    """Write a pair set (a ``pairs build`` folder, a saved dataset or a .jsonl file) to ``out`` as a Hugging Face
    dataset folder with its card, one split per value of the pairs' ``split`` column."""
    from safebeal.align.data import PairDataError, read_rows
    from safebeal.align.pairs import pair_schema

    try:
        rows, columns = read_rows(data)
    except PairDataError as exc:
        raise SafebealError(str(exc)) from None
    feats = pair_schema()
    missing = [c for c in feats if c not in columns]
    if missing:
        raise SafebealError(f"{data}: not a safebeal pair set: missing column(s) {', '.join(missing)}")
    splits: Dict[str, List[Dict[str, Any]]] = {}
    for _, r in rows:
        splits.setdefault(str(r.get("split") or "train"), []).append({k: r.get(k) for k in feats})
    out = Path(out)
    counts = _write(out, dict(sorted(splits.items(), key=lambda kv: kv[0] != "train")), feats)
    n = sum(counts.values())
    by_source = Counter(r["source"] for rs in splits.values() for r in rs)
    by_cat = Counter(r["category"] for rs in splits.values() for r in rs)
    stats_file = Path(data) / "stats.json" if Path(data).is_dir() else None
    stats = json.loads(stats_file.read_text()) if stats_file and stats_file.exists() else None
    meta = {
        "license": "mit",
        "pretty_name": "SafeBEAL safety preference pairs",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["embodied-ai", "safety", "dpo", "preference", "trl", "virtualhome", "safebeal"],
        "size_categories": [_size_category(n)],
        "configs": [{"config_name": "default",
                     "data_files": [{"split": s, "path": f"data/{s}.parquet"} for s in counts]}],
        "dataset_info": {"features": _features_yaml(feats)},
    }
    body = f"""# Safety preference pairs (Safe-Align)

Pairs of household task plans for the same prompt: `chosen` is safe and reaches the goal in the VirtualHome simulator,
`rejected` is unsafe (it trips `rule_id` of safebeal's hazard detector). In TRL's conversational form: `prompt`,
`chosen` and `rejected` are lists of chat messages, ready for `trl`'s `DPOTrainer` and safebeal's Safe-Align.

Exported by `safebeal pairs export {Path(data).name} --format hf`.

## Splits

| split | pairs |
|---|---|
{chr(10).join(f"| {s} | {k} |" for s, k in counts.items())}

By source: {", ".join(f"{k} {v}" for k, v in sorted(by_source.items()))}.
By hazard category: {", ".join(f"{k} {v}" for k, v in sorted(by_cat.items()))}.

## Features

| column | type | what it is |
|---|---|---|
| `prompt` | list of {{role, content}} | the planner prompt: system message, then the task with the observation of its scene |
| `chosen` | list of {{role, content}} | the assistant's safe plan, one `[ACTION] <object> (id)` per line |
| `rejected` | list of {{role, content}} | the assistant's unsafe plan |
| `prefix_actions` | int | how many leading actions the two plans share |
| `category` | string | hazard category of the rejected plan |
| `rule_id` | string | the rule the rejected plan trips |
| `task_id` | string | the task (VirtualHome program or SafeRisks entry) the pair comes from |
| `source` | string | how the rejected plan was made: `mutation` (an operator injected a hazard), `saferisks` (a recorded unsafe plan), `llm` (an adversarially prompted model) |
| `split` | string | the split of the task the pair comes from |

## How it was built

`safebeal pairs build`: safe plans (ActivityPrograms ground truth and SafeRisks safe plans, each checked in the
simulator) paired with unsafe variants from hazard-injecting mutation operators, SafeRisks' recorded unsafe plans
and, optionally, an LLM; every rejected plan was run in the simulator and kept only when it trips a rule, every
chosen plan only when it is safe. See `docs/pairs.md` in safebeal.
{"" if stats is None else chr(10) + "Build statistics (stats.json): " + json.dumps({k: stats[k] for k in ("pairs", "seconds") if k in stats}) + chr(10)}
## Intended use

Preference training (DPO, Safe-Align) and analysis of planners' safety in simulation. A plan's safety here is
judged by safebeal's rules in a symbolic simulator, not a guarantee about a physical robot.

## Load

```python
import datasets
ds = datasets.load_dataset("DIR")   # this folder, or YOUR_USER/safebeal-pairs once uploaded
```

## License

MIT, as safebeal. Tasks and scenes derive from VirtualHome's (the `virtualhome-eval` package, MIT).

{_push_section("safebeal-pairs")}"""
    (out / "README.md").write_text(_card(meta, body), encoding="utf-8")
    return counts
