"""audits/mutation.py itself (not a run of the mutants): every original occurs exactly once, the list covers
every area, ``--list`` and bad input, and one mutant applied to a copy changes that copy only."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mut():
    spec = importlib.util.spec_from_file_location("_mutation_check", ROOT / "audits" / "mutation.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def test_every_original_occurs_exactly_once_and_every_area_is_covered(mut):
    muts = mut.load_mutations()
    assert mut.check(muts) == []
    assert len(muts) >= 60
    files = {m.file for m in muts}
    for f in ("bench/metrics.py", "plans/parse.py", "plans/grounding.py", "safety/detector.py", "safety/shield.py",
              "bench/rundir.py", "scene/cache.py", "planners/backends/cache.py", "bench/viewer.py", "planners/backends/retry.py",
              "datasets/saferisks.py", "align/pair_judge.py", "align/losses.py", "safety/conditions.py"):
        assert "src/safebeal/" + f in files, f
    rule_files = {Path(f).name for f in files if "/data/rules/" in f}
    assert len(rule_files) >= 6 and len([f for f in files if "/data/rules/" in f]) >= 1
    # the four survivors of issue 36 are in the list
    ids = {m.id for m in muts}
    assert {"shield.before_not_rechecked", "rules.pour_into_running_device.liquid_appliance",
            "cache.scene_key_without_datasets", "saferisks.category_difference_reversed"} <= ids


def test_check_names_a_missing_or_repeated_original(mut, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\nx = 1\ny = 2\n")
    (tmp_path / "t.py").write_text("")
    M = mut.Mutation
    probs = mut.check([M("twice", "a.py", "x = 1", "x = 2", ("t.py",), ""),
                       M("none", "a.py", "z = 3", "z = 4", ("t.py",), ""),
                       M("ok", "a.py", "y = 2", "y = 3", ("t.py",), ""),
                       M("notests", "a.py", "y = 2", "y = 3", ("nope.py",), ""),
                       M("nofile", "b.py", "y", "z", ("t.py",), "")], root=tmp_path)
    assert probs == ["twice: the original occurs 2 times in a.py (must be exactly once): 'x = 1'",
                     "none: the original occurs 0 times in a.py (must be exactly once): 'z = 3'",
                     "notests: none of its test files exists: ['nope.py']",
                     "nofile: b.py does not exist"]


def test_applying_a_mutant_changes_the_copy_only(mut, tmp_path):
    m = next(x for x in mut.load_mutations() if x.id == "retry.no_5xx")
    dest = tmp_path / m.file
    dest.parent.mkdir(parents=True)
    shutil.copy(ROOT / m.file, dest)
    before = dest.read_text()
    text = mut.apply(m, tmp_path)
    after = dest.read_text()
    assert text == before and after != before
    assert "retryable = status in _RETRY_STATUSES\n" in after and "status >= 500" not in after
    assert [a for a, b in zip(before.splitlines(), after.splitlines()) if a != b] == \
        ["        retryable = status in _RETRY_STATUSES or status >= 500"]
    assert (ROOT / m.file).read_text() == before  # the working tree is untouched
    mut.restore(m, tmp_path, text)
    assert dest.read_text() == before


def test_list_and_bad_input(mut, capsys):
    assert mut.main(["--list", "--only", "retry.no_5xx"]) == 0
    out = capsys.readouterr().out
    assert "retry.no_5xx" in out and "tests/planners/test_backends.py" in out and out.rstrip().endswith(
        "1 mutations, every original found exactly once")
    assert mut.main(["--only", "no.such.mutation"]) == 2
    assert "unknown mutation id(s) ['no.such.mutation']" in capsys.readouterr().err


def test_kill_rate_counts_timeouts_as_killed(mut):
    R = mut.Result
    rs = [R("a", "f", "killed", 1, "", []), R("b", "f", "timeout", 1, "", []), R("c", "f", "survived", 1, "", []),
          R("d", "f", "killed", 1, "", [])]
    assert mut.kill_rate(rs) == 0.75 and mut.kill_rate([]) == 0.0
