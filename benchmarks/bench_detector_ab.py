"""The detector against an older version of itself, in one process, on the 518 ground-truth programs.

    git archive <rev> src | tar -x -C /tmp/old     # the code to compare against
    python benchmarks/bench_detector_ab.py --old /tmp/old/src [--repeats 5]

Separate processes drift with the machine's state (the warm overhead of one code moved by 2 points between runs of
one session), so the old and new detectors are timed in one process, interleaved per program as the runner uses
them: each program's script is executed on its (reused) scene and the fresh trajectory checked, once with each
version's simulator and detector, in alternating order. The old package is copied under the name
``safebeal_old`` (imports rewritten) so both can be imported. Printed per repeat: each version's ``check`` time
over its own simulation time (its warm overhead in this process), and the ratio of the two ``check`` times; then
their medians. Process CPU time.
"""

from __future__ import annotations

import argparse
import gc
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

IMPORTS = re.compile(r"\b(from|import) safebeal(?=[.\s])")


def copy_as_old(src: Path, dest: Path) -> None:
    """``src/safebeal`` copied to ``dest/safebeal_old``, its imports of ``safebeal`` rewritten."""
    pkg = src / "safebeal" if (src / "safebeal").is_dir() else src
    if not (pkg / "__init__.py").is_file():
        print(f"--old {src}: no safebeal package there (export one with `git archive <rev> src | tar -x -C DIR`)",
              file=sys.stderr)
        sys.exit(2)
    shutil.copytree(pkg, dest / "safebeal_old")
    for f in (dest / "safebeal_old").rglob("*.py"):
        text = f.read_text()
        new = IMPORTS.sub(r"\1 safebeal_old", text).replace('"safebeal.', '"safebeal_old.')
        if new != text:
            f.write_text(new)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, type=Path, help="a directory holding the older safebeal package (or src/)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="safebeal_old_"))
    copy_as_old(args.old, tmp)
    sys.path.insert(0, str(tmp))
    import safebeal_old.bench.evaluate as old_eval  # noqa: E402
    import safebeal_old.datasets.activity_programs as old_ap  # noqa: E402
    import safebeal_old.scene as old_scene  # noqa: E402

    from safebeal.bench.evaluate import detector_for
    from safebeal.datasets.activity_programs import load_program, program_ids
    from safebeal.scene import execute

    arms = []
    for load, ids, run, det in ((load_program, program_ids, execute, detector_for()),
                                (old_ap.load_program, old_ap.program_ids, old_scene.execute, old_eval.detector_for())):
        progs = [load(pid) for pid in ids()]
        scenes = [p.scene() for p in progs]
        for s, p in zip(scenes, progs):  # warm-up: scene and detector caches
            det.check(run(s, p.script))
        arms.append((progs, scenes, run, det))
    assert len(arms[0][0]) == len(arms[1][0])
    clock = time.process_time
    rows = []
    for r in range(args.repeats):
        gc.collect()
        sim, chk = [0.0, 0.0], [0.0, 0.0]
        for k in range(len(arms[0][0])):
            for a in ((0, 1) if (k + r) % 2 == 0 else (1, 0)):
                progs, scenes, run, det = arms[a]
                t0 = clock()
                traj = run(scenes[k], progs[k].script)
                t1 = clock()
                det.check(traj)
                sim[a] += t1 - t0
                chk[a] += clock() - t1
        rows.append((chk[0] / sim[0], chk[1] / sim[1], chk[0] / chk[1]))
        print(f"repeat {r + 1}: new check {chk[0]:.3f} s / sim {sim[0]:.3f} s = {100 * rows[-1][0]:+.1f}%; old check "
              f"{chk[1]:.3f} s / sim {sim[1]:.3f} s = {100 * rows[-1][1]:+.1f}%; new/old check {rows[-1][2]:.3f}",
              flush=True)
    med = statistics.median
    print(f"medians over {args.repeats} repeats: new {100 * med(x[0] for x in rows):+.1f}%, old "
          f"{100 * med(x[1] for x in rows):+.1f}%, new/old check time {med(x[2] for x in rows):.3f}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
