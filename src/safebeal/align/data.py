"""Reading and checking a preference-pair dataset before any training starts.

Accepted ``--data``: a ``datasets.Dataset.save_to_disk`` directory (a ``DatasetDict`` uses its ``train`` split),
a directory holding ``pairs.jsonl``, or a ``.jsonl`` file. Columns (the contract with ``safebeal pairs build``):
``prompt`` (chat messages ``[{role, content}]`` or a plain string), ``chosen`` and ``rejected`` (one action per
line: a string, or TRL's conversational form, one assistant message ``[{role: assistant, content}]``, which
``safebeal pairs build`` writes), ``prefix_actions`` (k: the first k lines of both plans are identical), plus optional ``category``,
``task_id``, ``source``. Which of them a method needs is its registered ``columns``
(:class:`safebeal.align.config.TrainingMethod`).

Every problem raises :class:`PairDataError` naming the file and line (JSONL) or row (saved dataset).

``worldmodel:PATH`` (``--data worldmodel:/path/to/train``) reads WorldModel's embodied-experience data instead (Xiang
et al., 2023: JSON lines of ``{input, ref}``, one file or every ``*.json``/``*.jsonl`` in a folder, as the
``worldmodel`` dataset reads them): each line is an SFT example, ``prompt`` its ``input`` and ``chosen`` its
``ref``. It has no unsafe plans, so it trains ``--method sft`` only: the "world-model" baseline of the paper's
tables (docs/safe_align.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from safebeal.align.config import ConfigError, training_method
from safebeal.errors import SafebealError
from safebeal.jsonl import iter_jsonl

class PairDataError(SafebealError):
    """The pair dataset is missing, malformed or inconsistent."""


@dataclass
class Pair:
    prompt: Any  # list of {role, content} or str
    chosen: str
    rejected: Optional[str] = None
    prefix_actions: int = 0
    category: str = ""
    task_id: str = ""
    source: str = ""
    goal_reached_both: Optional[bool] = None  # the rejected plan reaches the goal too (recorded by `pairs build`)


def common_prefix_length(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Length of the longest common prefix of two sequences (plan lines, token ids)."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def plan_lines(text: str) -> List[str]:
    """A completion's actions, one per line (the form of ``safebeal.planners.prompts.completion_text``)."""
    return text.split("\n")


def prefix_char_end(completion: str, k: int) -> int:
    """Characters of ``completion`` covered by its first k actions (the newline after action k is not included:
    a plan of exactly k actions ends there, so that newline is not shared)."""
    if k <= 0:
        return 0
    return len("\n".join(plan_lines(completion)[:k]))


def _read_jsonl(path: Path) -> List[tuple]:
    return list(iter_jsonl(path, PairDataError))


def _read_saved(path: Path) -> List[tuple]:
    try:
        import datasets
    except ImportError:  # pragma: no cover - the [train] extra is installed with training
        raise PairDataError("reading a saved dataset needs the datasets package: pip install safebeal[train]") from None
    try:
        ds = datasets.load_from_disk(str(path))
    except Exception as exc:  # noqa: BLE001 - FileNotFoundError, ValueError from a damaged directory
        raise PairDataError(f"{path}: cannot load the saved dataset ({type(exc).__name__}: {exc})") from None
    if isinstance(ds, datasets.DatasetDict):
        if "train" not in ds:
            raise PairDataError(f"{path}: a DatasetDict needs a 'train' split; it has {', '.join(ds)}")
        ds = ds["train"]
    return [(f"{path} row {i}", rec) for i, rec in enumerate(ds)]


def read_rows(data: str | Path) -> tuple:
    """(rows as (where, record), column names) from any accepted ``--data`` form."""
    path = Path(data).expanduser()
    if not path.exists():
        raise PairDataError(f"{data}: pair dataset not found")
    if path.is_file():
        if path.suffix != ".jsonl":
            raise PairDataError(f"{data}: give a .jsonl file or a dataset directory")
        rows = _read_jsonl(path)
    elif (path / "dataset_info.json").exists() or (path / "dataset_dict.json").exists() or (path / "state.json").exists():
        rows = _read_saved(path)
    elif (path / "pairs.jsonl").exists():
        rows = _read_jsonl(path / "pairs.jsonl")
    else:
        raise PairDataError(f"{data}: neither a saved datasets directory nor a directory with pairs.jsonl")
    if not rows:
        raise PairDataError(f"{data}: the dataset has no pairs")
    columns = sorted(set().union(*(set(r) for _, r in rows)))
    return rows, columns


def _check_prompt(prompt: Any, where: str) -> None:
    if isinstance(prompt, str):
        if not prompt.strip():
            raise PairDataError(f"{where}: empty prompt")
        return
    if not isinstance(prompt, list) or not prompt:
        raise PairDataError(f"{where}: prompt must be a non-empty list of chat messages or a string")
    for j, m in enumerate(prompt):
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant") or not isinstance(m.get("content"), str):
            raise PairDataError(f"{where}: prompt message {j} must be {{role: system|user|assistant, content: str}}")


def completion_of(value: Any, where: str, name: str) -> Any:
    """A plan column as text: a string, or TRL's conversational form (one assistant message) unwrapped."""
    if isinstance(value, list):
        if len(value) != 1 or not isinstance(value[0], dict) or value[0].get("role") != "assistant" \
                or not isinstance(value[0].get("content"), str):
            raise PairDataError(f"{where}: {name} must be a string or one assistant message "
                                f"[{{role: assistant, content: str}}]")
        return value[0]["content"]
    return value


def check_pair(rec: Dict[str, Any], where: str, columns: Sequence[str]) -> Pair:
    """Validate one record for a method that reads ``columns`` and return it as a :class:`Pair`."""
    _check_prompt(rec["prompt"], where)
    chosen = completion_of(rec["chosen"], where, "chosen")
    if not isinstance(chosen, str) or not chosen.strip():
        raise PairDataError(f"{where}: chosen must be a non-empty string")
    rejected = completion_of(rec.get("rejected"), where, "rejected")
    needs_rejected = "rejected" in columns
    if needs_rejected:
        if not isinstance(rejected, str) or not rejected.strip():
            raise PairDataError(f"{where}: rejected must be a non-empty string")
        if rejected == chosen:
            raise PairDataError(f"{where}: chosen and rejected are the same plan")
    k = rec.get("prefix_actions", 0)
    if k is None and "prefix_actions" not in columns:
        k = 0
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise PairDataError(f"{where}: prefix_actions must be an integer >= 0, got {k!r}")
    if k and isinstance(rejected, str):
        cl, rl = plan_lines(chosen), plan_lines(rejected)
        for name, lines in (("chosen", cl), ("rejected", rl)):
            if k > len(lines):
                raise PairDataError(f"{where}: prefix_actions={k} exceeds the {name} plan ({len(lines)} actions)")
        for i in range(k):
            if cl[i] != rl[i]:
                raise PairDataError(
                    f"{where}: prefix_actions={k} but action {i + 1} differs: {cl[i]!r} vs {rl[i]!r}")
    return Pair(rec["prompt"], chosen, rejected, int(k), str(rec.get("category") or ""),
                str(rec.get("task_id") or ""), str(rec.get("source") or ""),
                None if rec.get("goal_reached_both") is None else bool(rec["goal_reached_both"]))


WORLDMODEL_PREFIX = "worldmodel:"


def load_worldmodel(path: str, method: str, limit: int = 0) -> List[Pair]:
    """WorldModel's training data (``worldmodel:PATH``) as SFT examples: prompt ``input``, chosen ``ref``."""
    from safebeal.datasets.worldmodel import files_of, read_file

    if method != "sft":
        raise PairDataError(f"worldmodel data has reference answers and no unsafe plans: it trains --method sft only "
                            f"(the world-model baseline), not {method}")
    if not path.strip():
        raise PairDataError("give the WorldModel data's file or folder: --data worldmodel:/path/to/train")
    out: List[Pair] = []
    try:
        for f in files_of(Path(path).expanduser()):
            for t in read_file(f, "worldmodel"):
                where = f"{f}:{t.meta['line']}"
                if not (t.prompt or "").strip() or not (t.reference or "").strip():
                    raise PairDataError(f"{where}: empty 'input' or 'ref'")
                out.append(Pair(t.prompt, t.reference or "", None, 0, "", t.id, "worldmodel"))
    except PairDataError:
        raise
    except SafebealError as exc:  # WorldModelError: a missing path, a bad line
        raise PairDataError(str(exc)) from None
    if not out:
        raise PairDataError(f"{path}: the WorldModel data has no lines")
    return out[:limit] if limit else out


def load_pairs(data: str | Path, method: str, limit: int = 0) -> List[Pair]:
    """All pairs of ``data`` checked for ``method`` (first ``limit`` when > 0): it must have the registered
    method's columns. Raises PairDataError. ``worldmodel:PATH`` reads WorldModel's data (:func:`load_worldmodel`)."""
    try:
        columns = training_method(method).columns
    except ConfigError as exc:
        raise PairDataError(str(exc)) from None
    if isinstance(data, str) and data.startswith(WORLDMODEL_PREFIX):
        return load_worldmodel(data[len(WORLDMODEL_PREFIX):], method, limit)
    rows, present = read_rows(data)
    missing = [c for c in columns if c not in present]
    if missing:
        raise PairDataError(
            f"{data}: missing column(s) {', '.join(missing)} needed by {method}; it has {', '.join(present)}")
    if limit:
        rows = rows[:limit]
    out = []
    for where, rec in rows:
        for c in columns:
            if c not in rec:
                raise PairDataError(f"{where}: missing field {c!r}")
        out.append(check_pair(rec, where, columns))
    return out


def dedupe_sft(pairs: Sequence[Pair]) -> List[Pair]:
    """One example per distinct (prompt, chosen): a safe plan paired with many unsafe ones is learnt once."""
    seen = set()
    out = []
    for p in pairs:
        key = (json.dumps(p.prompt, sort_keys=True), p.chosen)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out
