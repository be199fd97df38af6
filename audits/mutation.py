"""The mutation check (issue 36): plant one-line bugs whose effect a user would see, one at a time, and run the
tests of their area against each. A mutant the tests fail on is *killed*; one they pass is a *survivor*: a test
gap (or an equivalent mutant, which then does not belong in the list).

    python audits/mutation.py [--jobs 2] [--only ID ...] [--list] [--json out.json] [--timeout 300]

The mutations are in ``audits/mutation_list.py``: (id, file, original snippet, replacement, test files, what a
user would see). Every original must occur exactly once in its file, so a refactor that moves or changes a line
fails the check loudly (``--list`` checks that too). Mutants are never applied to the working tree: each job
works in its own copy of the repository (without ``.git``) under a temporary directory, patches one file, runs
``pytest -x -q -p no:cacheprovider`` on the area's test files with that copy's ``src`` first on the path, and
restores the file. Before the mutants, each area's tests are run once unmutated (``--no-baseline`` skips it): a
failing baseline makes every kill meaningless, so the check stops. A mutant that runs past ``--timeout`` counts
as killed (a hang is something a user sees) and is reported as ``timeout``. Exit status: 0 when the kill rate is
at least ``--target`` (default 0.9), 1 below it, 2 on bad input (an unknown id, a missing or ambiguous original).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".git", ".venv", "venv", ".ci-venv", "runs", "logs", "build", "dist", "__pycache__", ".pytest_cache",
             ".hypothesis"}


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str  #: relative to the repository root
    original: str  #: an exact snippet (one line or more) that occurs exactly once in ``file``
    replacement: str
    tests: Tuple[str, ...]  #: the area's test files (those that do not exist in the tree are left out)
    what: str  #: what a user would see if this bug shipped


def load_mutations(path: Path = ROOT / "audits" / "mutation_list.py") -> List[Mutation]:
    spec = importlib.util.spec_from_file_location("_mutation_list", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    out = [Mutation(m[0], m[1], m[2], m[3], tuple(m[4]), m[5]) for m in mod.MUTATIONS]
    ids = [m.id for m in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"{path}: duplicate mutation ids {dup}")
    return out


def check(mutations: Sequence[Mutation], root: Path = ROOT) -> List[str]:
    """One line per problem: a file that is missing, an original that occurs not exactly once, a no-op mutation,
    a mutation with no existing test file."""
    problems = []
    for m in mutations:
        f = root / m.file
        if not f.is_file():
            problems.append(f"{m.id}: {m.file} does not exist")
            continue
        n = f.read_text(encoding="utf-8").count(m.original)
        if n != 1:
            problems.append(f"{m.id}: the original occurs {n} times in {m.file} (must be exactly once): {m.original!r}")
        if m.original == m.replacement:
            problems.append(f"{m.id}: the replacement equals the original")
        if not existing_tests(m, root):
            problems.append(f"{m.id}: none of its test files exists: {list(m.tests)}")
    return problems


def existing_tests(m: Mutation, root: Path = ROOT) -> List[str]:
    return [t for t in m.tests if (root / t.split("::")[0]).is_file()]


def copy_tree(dest: Path, root: Path = ROOT) -> Path:
    """A copy of the repository's files (no .git, virtual environments or caches) at ``dest``."""
    shutil.copytree(root, dest, ignore=lambda d, names: [n for n in names if n in SKIP_DIRS or n.endswith(".pyc")])
    return dest


def apply(m: Mutation, tree: Path) -> str:
    """Patch ``m`` into the copy at ``tree``; returns the file's original text (for :func:`restore`)."""
    f = tree / m.file
    text = f.read_text(encoding="utf-8")
    if text.count(m.original) != 1:
        raise ValueError(f"{m.id}: the original occurs {text.count(m.original)} times in {m.file}")
    f.write_text(text.replace(m.original, m.replacement), encoding="utf-8")
    return text


def restore(m: Mutation, tree: Path, text: str) -> None:
    (tree / m.file).write_text(text, encoding="utf-8")


def run_tests(tree: Path, tests: Sequence[str], timeout: float, cache_home: Path) -> Tuple[str, float, str]:
    """``(status, seconds, last output lines)``; status: ``pass``, ``fail`` or ``timeout``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree / "src")] + ([os.environ["PYTHONPATH"]]
                                                                              if os.environ.get("PYTHONPATH") else [])),
           "XDG_CACHE_HOME": str(cache_home), "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow", *tests]
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - t0, ""
    tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-3:])
    if r.returncode == 5:  # nothing collected: the test list is wrong, not a kill
        raise RuntimeError(f"no tests collected from {list(tests)}:\n{tail}")
    return ("pass" if r.returncode == 0 else "fail"), time.monotonic() - t0, tail


@dataclass
class Result:
    id: str
    file: str
    status: str  #: killed, survived or timeout
    seconds: float
    what: str
    tests: List[str]
    output: str = ""


def _log(line: str) -> None:
    print(line, flush=True)


def run_all(mutations: Sequence[Mutation], jobs: int = 1, timeout: float = 300, baseline: bool = True,
            log=_log) -> List[Result]:
    work = Path(tempfile.mkdtemp(prefix="safebeal-mutation-"))
    try:
        cache_home = work / "cache"
        trees = [copy_tree(work / f"tree{j}") for j in range(max(1, jobs))]
        free = list(trees)
        import threading

        lock = threading.Lock()

        def take() -> Path:
            with lock:
                return free.pop()

        def give(t: Path) -> None:
            with lock:
                free.append(t)

        if baseline:
            groups = sorted({tuple(existing_tests(m)) for m in mutations})

            def base(tests: Tuple[str, ...]) -> Tuple[Tuple[str, ...], str, float, str]:
                tree = take()
                try:
                    return (tests, *run_tests(tree, tests, timeout, cache_home))
                finally:
                    give(tree)

            with ThreadPoolExecutor(max_workers=len(trees)) as ex:
                for tests, status, secs, tail in ex.map(base, groups):
                    log(f"baseline {status:7s} {secs:6.1f}s  {' '.join(tests)}")
                    if status != "pass":
                        raise RuntimeError(f"the unmutated tests do not pass ({status}): {' '.join(tests)}\n{tail}")

        def one(m: Mutation) -> Result:
            tree = take()
            try:
                text = apply(m, tree)
                try:
                    status, secs, tail = run_tests(tree, existing_tests(m), timeout, cache_home)
                finally:
                    restore(m, tree, text)
            finally:
                give(tree)
            res = Result(m.id, m.file, {"pass": "survived", "fail": "killed"}.get(status, status), round(secs, 1),
                         m.what, existing_tests(m), tail if status == "pass" else "")
            log(f"{res.status:8s} {secs:6.1f}s  {m.id}")
            return res

        with ThreadPoolExecutor(max_workers=len(trees)) as ex:
            return list(ex.map(one, mutations))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def kill_rate(results: Sequence[Result]) -> float:
    return sum(r.status != "survived" for r in results) / len(results) if results else 0.0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once, each in its own copy (default 1)")
    ap.add_argument("--only", action="append", default=[], metavar="ID", help="run only this mutation (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the mutations (and check their originals), run nothing")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per test run (default 300)")
    ap.add_argument("--no-baseline", action="store_true", help="do not run each area's tests unmutated first")
    ap.add_argument("--target", type=float, default=0.9, help="the kill rate below which the exit status is 1")
    args = ap.parse_args(argv)
    try:
        muts = load_mutations()
    except (ValueError, SyntaxError, IndexError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problems = check(muts)
    if problems:
        for p in problems:
            print(f"error: {p}", file=sys.stderr)
        return 2
    if args.only:
        known = {m.id for m in muts}
        bad = [i for i in args.only if i not in known]
        if bad:
            print(f"error: --only: unknown mutation id(s) {bad}; see --list", file=sys.stderr)
            return 2
        muts = [m for m in muts if m.id in args.only]
    if args.list:
        for m in muts:
            print(f"{m.id:45s} {m.file}  [{' '.join(existing_tests(m))}]\n    {m.what}")
        print(f"{len(muts)} mutations, every original found exactly once")
        return 0
    if args.jobs < 1 or args.timeout <= 0:
        print("error: --jobs must be at least 1 and --timeout positive", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    try:
        results = run_all(muts, args.jobs, args.timeout, not args.no_baseline)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wall = time.monotonic() - t0
    rate = kill_rate(results)
    survivors = [r for r in results if r.status == "survived"]
    timeouts = [r for r in results if r.status == "timeout"]
    print(f"\n{len(results) - len(survivors)} of {len(results)} mutants killed: kill rate {rate:.1%} "
          f"({len(timeouts)} by timeout), {wall:.0f} s wall with {args.jobs} job(s)")
    for r in survivors:
        print(f"SURVIVED {r.id} ({r.file}): {r.what}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"kill_rate": rate, "n": len(results), "killed": len(results) - len(survivors),
                                         "wall_s": round(wall, 1), "jobs": args.jobs,
                                         "results": [asdict(r) for r in results]}, indent=1) + "\n")
    return 0 if rate >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
