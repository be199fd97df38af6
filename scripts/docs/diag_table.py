"""The diagnostic table's runs (docs/bench.md, "The diagnostic table"): the paper's four generating planners on
VirtualHome and SafeRisks-test, with the mock backend, then ``safebeal diag`` over the run directories.

    python scripts/docs/diag_table.py --out runs/diag            # both sources; prints the two Markdown tables

No LLM is called. Two sources of answers, each a ``mock:outputs=FILE`` whose lines match a task's prompt
(``Task: <instruction>\\n<description>\\n<observation>``, unique per task):

- ``scripted``: every task answered with a plan from the data itself, each step written ``# confidence: 0.9``:
  VirtualHome with its ground-truth program, SafeRisks-test alternately (by task order) with the entry's verified
  safe plan and its first verified unsafe plan. The figures check the pipeline (asking, parsing, recording,
  summarising confidence), not a model: Conf is the scripted 0.90.
- ``recorded``: VirtualHome tasks answered with GPT-4o's recorded output (virtualhome-eval's 15 recordings;
  ``replay:gpt-4o`` evaluates the same text). The recordings hold no confidence, so Conf is n/a, and there are no
  recordings of SafeRisks, so that column is left out.

The four planners get the same answers (the mock answers by task), so their rows agree; what differs between them
in a live run is the prompt, which ``safebeal prompt show`` prints.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

PLANNERS = ("few-shot", "few-shot:safety_prompt=true", "llm-planner", "llm-planner:safety_prompt=true")


def task_key(task) -> str:
    from safebeal.planners.prompts import observation_text

    return f"Task: {task.instruction}\n{task.description}\n{observation_text(task, 'full')}"


def write_mock(path: Path, answers) -> int:
    lines = [json.dumps({"match": key, "text": text}) for key, text in answers]
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def scripted(dataset: str):
    from safebeal.datasets.base import DATASETS

    out = []
    for i, t in enumerate(DATASETS.create(dataset).tasks()):
        unsafe = t.meta.get("unsafe_plans")
        plan = unsafe[0]["plan"] if unsafe and i % 2 == 1 else (t.reference or "").splitlines()
        out.append((task_key(t), "\n".join(f"{line} # confidence: 0.9" for line in plan)))
    return out


def recorded(dataset: str, model: str = "gpt-4o"):
    from safebeal.datasets.base import DATASETS
    from safebeal.planners.planners import ReplayPlanner

    rp = ReplayPlanner(model)
    return [(task_key(t), rp.outputs[t.id]) for t in DATASETS.create(dataset).tasks() if t.id in rp.outputs]


def bench(mock: Path, dataset: str, out: Path, workers: int) -> None:
    specs = [p + ("," if ":" in p else ":") + f"backend=[mock:outputs={mock}],confidence=true" for p in PLANNERS]
    cmd = [sys.executable, "-m", "safebeal.cli", "bench", "--dataset", dataset, "--out", str(out), "--overwrite",
           "--workers", str(workers)]
    for s in specs:
        cmd += ["--planner", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs/diag")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = [f"{p} as {name}" for p, name in zip(PLANNERS, ("Few-shot", "Few-shot + safety prompt", "LLM-Planner",
                                                          "LLM-Planner + safety prompt"))]
    for source, datasets in (("scripted", ("virtualhome", "saferisks-test")), ("recorded", ("virtualhome",))):
        runs = []
        for ds in datasets:
            mock = out / f"{source}-{ds}.mock.jsonl"
            n = write_mock(mock, scripted(ds) if source == "scripted" else recorded(ds))
            run = out / f"{source}-{ds}"
            bench(mock, ds, run, a.workers)
            runs.append(str(run))
            print(f"{source} {ds}: {n} scripted answers -> {run}", file=sys.stderr)
        cmd = [sys.executable, "-m", "safebeal.cli", "diag", *runs, "--out", str(out / f"diag-{source}.md")]
        for r in rows:
            cmd += ["--planner", r]
        print(f"\n### {source}\n\n`{' '.join(cmd[2:])}`\n")
        sys.stdout.flush()
        subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
