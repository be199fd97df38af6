"""Mutation fuzzing of the evaluation path (issue 21): real recorded LLM outputs, mutated, through
:func:`safebeal.bench.evaluate.evaluate_output` and the episode's serialisation and reading back.

Used by ``tests/bench/test_fuzz.py`` (a few hundred examples driven by hypothesis) and by
``audits/fuzz_eval.py`` (100k inputs, counts and timings in ``audits/RESULTS.md``).

The mutations aim at what broke before: characters a UTF-8 writer cannot encode (unpaired surrogates, NUL),
Rich markup and emoji codes, brackets and quotes that open JSON or script syntax, ids that are not integers or
have thousands of digits, long runs of spaces (the old regexes backtracked in n^2 to n^4 on them), deep nesting,
duplicated and truncated pieces, and outputs over the parser's size cap.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.bench.records import Episode

TOKENS: Tuple[str, ...] = (
    "\ud83d", "\udc00", "\ud83d\ude00", "\x00", "\x1b[31m", "\u202e", "\ufeff", "[/]", "[bold]", "[walk]", ":100:",
    "[", "]", "<", ">", "(", ")", "{", "}", '"', "'", ",", ":", "\n", "\r\n", "\t", "#", "//", "```", "\\", "\\u",
    "(205.5)", "(1.205)", "(-3)", "(1e9)", "(" + "9" * 5000 + ")", "NaN", "Infinity", "null", "true",
    "[WALK]", "[WALK] <kitchen> (1)", "[GRAB] <", "1. ", "Step 3:", "- ", '{"WALK": ["', '["WALK", "', '[["',
    "<" + " " * 200 + ">x", "{object:>2000000000}", "{" * 40, "[" * 40,
    " " * 40_000 + "x", "\t" * 20_000 + "x", " " * 5000 + "(", "1." + " " * 20_000 + "x",  # the probe's backtracking cases
)


def _nasty(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.6:
        return rng.choice(TOKENS)
    if r < 0.75:
        return rng.choice(" \t-.0[<(") * rng.choice((50, 500, 5000, 40_000))  # long runs
    if r < 0.85:
        return "".join(chr(rng.randrange(0, 0x110000)) for _ in range(rng.randrange(1, 8)))  # any code point
    if r < 0.95:
        depth = rng.choice((20, 200, 5000))
        return "[" * depth + '"WALK"' + "]" * rng.choice((0, depth))
    return "".join(rng.choice("[]<>(){}\"', \n0123456789.") for _ in range(rng.randrange(1, 300)))


def mutate(text: str, rng: random.Random, max_ops: int = 4) -> str:
    """1 to ``max_ops`` random edits of ``text``: insert a nasty token, delete, duplicate or truncate a slice,
    replace characters, or repeat the whole text past the parser's size cap."""
    for _ in range(rng.randrange(1, max_ops + 1)):
        n = len(text)
        op = rng.random()
        i = rng.randrange(0, n + 1)
        j = rng.randrange(i, min(n, i + 2000) + 1)
        if op < 0.35:
            text = text[:i] + _nasty(rng) + text[i:]
        elif op < 0.45:  # at the end of a line, where a trailing-garbage regex looks
            e = text.find("\n", i)
            e = n if e < 0 else e
            text = text[:e] + _nasty(rng) + text[e:]
        elif op < 0.60:
            text = text[:i] + text[j:]
        elif op < 0.72:
            text = text[:j] + text[i:j] * rng.randrange(1, 50) + text[j:]
        elif op < 0.80:
            text = text[:i]
        elif op < 0.95:
            text = text[:i] + "".join(chr(rng.randrange(0, 0x110000)) if rng.random() < 0.3 else c for c in text[i:j]) + text[j:]
        else:
            text = text * rng.choice((2, 10, 1000))  # may pass the 1,000,000-character cap
        if len(text) > 3_000_000:
            text = text[:3_000_000]
    return text


@dataclass
class Corpus:
    tasks: Dict[str, Any]
    items: List[Tuple[str, str]]  # (task id, recorded output)


def load_corpus(models: Optional[Sequence[str]] = None, n_tasks: Optional[int] = None) -> Corpus:
    """The recorded outputs of the 15 LLMs shipped in virtualhome-eval (or ``models``) on the 342 VirtualHome
    tasks (or the first ``n_tasks`` of them: building every task takes ~25 s), with their tasks; each output
    that parses also comes as script lines (half of them numbered)."""
    from safebeal.datasets.virtualhome import program_task, tasks as vh_tasks
    from safebeal.planners.planners import _recorded, recorded_models

    ids = [t.id for t in vh_tasks()][: n_tasks or None]
    tasks = {pid: program_task(pid, "virtualhome") for pid in ids}
    from safebeal.plans.parse import parse_plan

    items: List[Tuple[str, str]] = []
    for m in models or recorded_models():
        for tid, text in sorted(_recorded(m).items()):
            if tid in tasks and isinstance(text, str):
                items.append((tid, text))
                # the same plan as script lines ("[WALK] <kitchen> (11)"), so the script-line parser is fuzzed too:
                # the recorded outputs are JSON dicts
                steps = parse_plan(text).steps
                if steps:
                    items.append((tid, "\n".join(f"{k + 1}. {s}" if k % 2 else str(s) for k, s in enumerate(steps))))
    return Corpus(tasks, items)


def run_one(task: Any, text: str, det: Any, timeout: float) -> Tuple[Episode, float]:
    """Evaluate and serialise one output the way a bench worker does, read it back; returns (episode, seconds).
    Raises whatever the path raises (a crash, for the fuzzers to count)."""
    from safebeal.bench.evaluate import evaluate_output
    from safebeal.bench.runner import dump_episode

    t0 = time.perf_counter()
    ep = evaluate_output(task, "fuzz", text, None, det, timeout=timeout)
    line = dump_episode(ep)
    back = Episode.model_validate_json(line)
    line.encode("utf-8")  # what the run directory writes
    return back, time.perf_counter() - t0
