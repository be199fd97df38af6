"""benchmarks/bench_detector_ab.py imports an older safebeal beside this one: its copy must import itself only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from script_helpers import load_script

ROOT = Path(__file__).resolve().parents[2]


def _module():
    return load_script(ROOT / "benchmarks" / "bench_detector_ab.py")


def test_the_old_copy_imports_itself(tmp_path):
    _module().copy_as_old(ROOT / "src", tmp_path)
    pkg = tmp_path / "safebeal_old"
    left = [f"{f.relative_to(pkg)}:{n}" for f in pkg.rglob("*.py")
            for n, line in enumerate(f.read_text().splitlines(), 1)
            if line.lstrip().startswith(("from safebeal.", "import safebeal.", "from safebeal import"))]
    assert left == []
    code = ("import sys; import safebeal_old.safety.detector as d, safebeal_old.scene as s; "
            "print(d.__file__); print(sorted(m for m in sys.modules if m == 'safebeal' or m.startswith('safebeal.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": str(tmp_path), "PATH": ""}, check=True).stdout.splitlines()
    assert out[0].startswith(str(pkg)) and out[1] == "[]"


def test_a_folder_without_the_package_is_refused(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_detector_ab.py"), "--old", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "no safebeal package there" in proc.stderr
