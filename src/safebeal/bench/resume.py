"""``bench --resume`` and ``bench --retry-failed``: continue exactly the run recorded in ``--out``'s config.json.

Its planners (the specs as given, from ``run_config``), dataset, backend, limits, rules, attribution, action
vocabulary, generation settings (and any other field of :class:`~safebeal.bench.runner.RunConfig` it recorded,
sampling included) come from config.json. A flag given on the command line that says otherwise is an error naming
both values; a flag that says the same is accepted. Only how the run is executed (workers, executor, cache, PNGs)
may differ.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from safebeal.bench.rundir import RunDir, RunDirError
from safebeal.errors import SafebealError

#: command-line flags of ``bench`` that the recorded run decides -> the RunConfig field each one sets
RECORDED_FLAGS = {"dataset": "dataset", "backend": "backend", "limit": "limit", "strict": "strict", "rules": "rules",
                  "objects": "objects", "actions": "actions", "episode_timeout": "episode_timeout",
                  "sample": "sample", "category": "categories", "task": "tasks", "epochs": "epochs"}
#: RunConfig fields that say how a run is executed, not what it is: never taken from config.json
EXECUTION_FIELDS = ("out", "workers", "resume", "overwrite", "retry_failed", "cache", "cache_dir", "executor",
                    "ray_address", "png")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return list(a or []) == list(b or [])
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def _contradiction(flag: str, given: Any, recorded: Any, config_path: Path) -> SafebealError:
    return SafebealError(f"{flag} {given!r} contradicts the run's recorded {recorded!r} ({config_path}); leave it "
                         "out to continue the run as recorded, or start another --out")


def _match_planners(given: Sequence[str], specs: Sequence[str], labels: Sequence[str], retry: bool,
                    config_path: Path) -> List[str]:
    """The planners to run: the recorded specs; ``--planner`` may repeat them (as a spec, or as the label the run
    gives it; a spec whose URL carries credentials the record strips matches too, and is used as given), and with
    ``--retry-failed`` name a subset of them."""
    from safebeal.planners.backends.retry import strip_userinfo

    if not given:
        return list(specs)
    chosen: List[str] = []
    for g in given:
        for i, spec in enumerate(specs):
            label = labels[i] if i < len(labels) else spec
            if g in (spec, label) or strip_userinfo(g) == spec:
                chosen.append(g if strip_userinfo(g) == spec else spec)
                break
        else:
            raise _contradiction("--planner", g, list(specs), config_path)
    if not retry and set(chosen) != set(specs):
        raise _contradiction("--planner", list(given), list(specs), config_path)
    return chosen


def resume_config(out: str, given: Mapping[str, Any], gen: Optional[Dict[str, Any]] = None,
                  retry: bool = False) -> Any:
    """The RunConfig that continues the run in ``out`` (``retry``: regenerating its failed samples). ``given``
    holds the flags typed on the command line (name -> value; ``planner`` a list of specs), ``gen`` the
    generation settings given there. Raises :class:`SafebealError` for a flag that contradicts config.json."""
    from safebeal.bench.rundir import read_config
    from safebeal.bench.runner import RunConfig

    run = RunDir(out)
    if Path(out).is_dir() and (Path(out) / ".lock").exists():
        run.lock()  # another process writing the run: say so (before reading a config.json it may be writing)
        run.unlock()
    config = read_config(out)
    path = Path(out) / "config.json"
    old = dict(config.get("run_config") or {})
    known = {f.name for f in fields(RunConfig)}
    values = {k: v for k, v in old.items() if k in known and k not in EXECUTION_FIELDS}
    labels = [str(p) for p in config.get("planners", [])]
    specs = [str(p) for p in (old.get("planners") or labels)]
    values.update(dataset=config["dataset"], strict=bool(config.get("strict", False)),
                  limit=int(config.get("limit") or 0), actions=str(config.get("actions") or "extended"))
    if "planners" not in old and labels:  # an older run: its labels are its specs
        specs = labels
    from safebeal.planners.backends.retry import strip_userinfo

    for flag, fld in RECORDED_FLAGS.items():
        if flag not in given:
            continue
        value, recorded = given[flag], values.get(fld, getattr(RunConfig, fld, None))
        if flag == "backend" and isinstance(value, str) and strip_userinfo(value) == recorded:
            values["backend"] = value  # the same backend, with the credentials the record leaves out
        elif not _same(value, recorded):
            raise _contradiction(_flag(flag), value, recorded, path)
    recorded_gen = dict(values.get("gen") or {})
    for k, v in (gen or {}).items():
        if not _same(v, recorded_gen.get(k)):
            raise _contradiction(_flag(k), v, recorded_gen.get(k), path)
    values["planners"] = _match_planners(list(given.get("planner") or []), specs, labels, retry, path)
    try:
        cfg = RunConfig(**values)
    except TypeError as exc:  # pragma: no cover - a field of another version
        raise RunDirError(f"{path}: cannot resume: {exc}") from None
    cfg.out, cfg.resume, cfg.retry_failed = str(out), not retry, retry
    return cfg


def incomplete_planners(summary: Mapping[str, Any], n_tasks: Optional[int]) -> List[str]:
    """One line for each planner of a finished run that has fewer samples than the run has tasks."""
    if not n_tasks:
        return []
    out = []
    for label, m in summary.items():
        n = int((m or {}).get("n") or 0)
        if n < n_tasks:
            out.append(f"{label}: {n_tasks - n} of {n_tasks} tasks not done")
    return out
