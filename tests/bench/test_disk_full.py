"""A full disk while the report is written (issue 34, item 12): one line, a non-zero exit, and report.html,
summary.json and the PNGs as they were (each is written to a temporary file, fsynced, then renamed over the old one).
The full disk is simulated: every file opened for writing in the run directory takes 1,000 bytes, then its write
raises ``OSError(ENOSPC)``, as a real one does part-way through."""

from __future__ import annotations

import builtins
import errno
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from safebeal.bench.runner import RunConfig, run_bench
from safebeal.cli import app

PLANNERS = ["replay:gpt-3.5-turbo-0125", "replay:gpt-4o-2024-05-13"]
OUTPUTS = ("report.html", "summary.json", "leaderboard.png", "violations_by_category.png", "violations_by_kind.png")


class _FullDisk(io.RawIOBase):
    """A file on a disk with ``room`` bytes left: writes past it raise ENOSPC (what was written stays)."""

    def __init__(self, real, room: int):
        self.real, self.room = real, room

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        b = bytes(b)
        if len(b) > self.room:
            self.real.write(b[: self.room])
            self.real.flush()
            self.room = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(b)
        return self.real.write(b)

    def fileno(self) -> int:
        return self.real.fileno()

    def flush(self) -> None:
        if not self.real.closed:
            self.real.flush()

    def close(self) -> None:
        super().close()
        self.real.close()


@pytest.fixture
def full_disk(monkeypatch):
    """``full_disk.append((directory, name))``: files in ``directory`` whose name holds ``name`` (``report.html``
    also matches its temporary file ``.report.html.tmp<pid>``) run out of space after 1,000 bytes."""
    targets = []
    real_open = builtins.open

    def hit(file) -> bool:
        p = Path(file).resolve()
        return any(p.parent == d and name in p.name for d, name in targets)

    def fake_open(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, Path)) and any(c in mode for c in "wax") and hit(file):
            raw = real_open(file, mode.replace("t", "") if "b" in mode else mode.replace("t", "") + "b")
            f = _FullDisk(raw, 1000)
            if "b" in mode:
                return io.BufferedWriter(f, 256)
            return io.TextIOWrapper(io.BufferedWriter(f, 256), encoding=kwargs.get("encoding") or "utf-8")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)
    return targets


@pytest.fixture
def small_run(tmp_path):
    out = tmp_path / "run"
    run_bench(RunConfig(planners=PLANNERS, dataset="virtualhome", out=str(out), limit=5, workers=1))
    return out


def _snapshot(run: Path) -> dict:
    return {name: (run / name).read_bytes() for name in OUTPUTS}


def _one_line(r) -> str:
    assert r.exit_code not in (0, None), r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.mark.parametrize("full", ["summary.json", "leaderboard.png", "violations_by_kind.png", "report.html"])
def test_report_on_a_full_disk_keeps_the_previous_files(small_run, full_disk, full):
    before = _snapshot(small_run)
    # fewer samples, so that a report written whole would differ from the one there
    samples = (small_run / "samples.jsonl").read_text().splitlines()
    (small_run / "samples.jsonl").write_text("\n".join(samples[:-2]) + "\n")
    full_disk.append((small_run.resolve(), full))
    r = CliRunner().invoke(app, ["report", str(small_run)])
    line = _one_line(r)
    assert f"{full}: cannot write: No space left on device" in line, line
    assert line.endswith(f"free space, then rebuild the report with: safebeal report {small_run}") or \
        line.endswith(f"free space, then rebuild it with: safebeal report {small_run}"), line
    after = _snapshot(small_run)
    assert after[full] == before[full]  # nothing half-written: the file that did not fit is the previous one, whole
    assert after["report.html"] == before["report.html"]  # written last: never a report without its charts
    assert before["report.html"].rstrip().endswith(b"</html>")
    assert [p.name for p in small_run.iterdir() if ".tmp" in p.name] == []  # no temporary file left behind


def test_bench_on_a_full_disk_keeps_its_samples(tmp_path, full_disk):
    """A run whose report does not fit: one line, exit non-zero, every sample kept; `safebeal report` rebuilds it."""
    out = tmp_path / "run"
    out.mkdir()
    full_disk.append((out.resolve(), "report.html"))
    r = CliRunner().invoke(app, ["bench", "-p", PLANNERS[0], "--limit", "3", "--workers", "1", "--no-png", "--out", str(out)])
    assert "report.html: cannot write: No space left on device" in _one_line(r)
    assert len((out / "samples.jsonl").read_text().splitlines()) == 3
    assert not (out / "report.html").exists()
    full_disk.clear()
    r = CliRunner().invoke(app, ["report", str(out), "--no-png"])
    assert r.exit_code == 0, r.output
    assert (out / "report.html").read_text().rstrip().endswith("</html>")
