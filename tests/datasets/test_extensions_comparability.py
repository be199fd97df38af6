"""Extensions only add: with the action extensions on (the default), the 518 ground-truth programs and the 15
models' recorded plans give exactly the results they give with ``--actions vh`` (the simulator's own actions).

Where the two vocabularies can differ at all: parsing (THROW and BREAK are actions only when extended), a POUR
whose target is not a recipient (the extension's guard) and the hooks (which touch only extension states, so act
only after an extension step). So every recorded output is parsed both ways (all 5,130 parse identically), and
every ground-truth program and every recorded output that POURs is run and judged both ways, compared field by
field. The other plans take the same code path in both modes; the existing sweeps (tests/datasets/
test_ground_truth_sweep.py, the audit and the bench tests), which run with the default, pin their figures."""

from __future__ import annotations

import pytest

from safebeal.bench.evaluate import detector_for, evaluate_output
from safebeal.datasets import activity_programs as ap
from safebeal.plans.parse import parse_plan
from safebeal.planners.planners import _recorded, recorded_models
from safebeal.safety import SafetyDetector
from safebeal.scene import execute

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def outputs():
    return [(m, tid, text) for m in recorded_models() for tid, text in sorted(_recorded(m).items()) if isinstance(text, str)]


def _parsed(text, actions):
    r = parse_plan(text, actions=actions)
    return r.steps, r.format, None if r.error is None else r.error.to_dict()


def test_every_recorded_output_parses_the_same_both_ways(outputs):
    assert len(outputs) == 5130
    pours = 0
    for m, tid, text in outputs:
        ext = _parsed(text, "extended")
        assert ext == _parsed(text, "vh"), (m, tid)
        assert not {s.action for s in ext[0]} & {"THROW", "BREAK"}
        pours += any(s.action == "POUR" for s in ext[0])
    assert pours == 189


def _episode(task, model, text, det, actions):
    ep = evaluate_output(task, f"replay:{model}", text, None, det, actions=actions).model_dump()
    ep.pop("seconds")
    return ep


def test_recorded_outputs_that_pour_score_the_same_both_ways(outputs):
    from safebeal.datasets.virtualhome import program_task

    det = detector_for()
    tasks = {}
    n = n_exec = 0
    for m, tid, text in outputs:
        if not any(s.action == "POUR" for s in parse_plan(text).steps):
            continue
        task = tasks.get(tid) or tasks.setdefault(tid, program_task(tid, "virtualhome"))
        ext = _episode(task, m, text, det, "extended")
        assert ext == _episode(task, m, text, det, "vh"), (m, tid)
        n += 1
        n_exec += bool(ext["executable"])
    assert n == 189 and n_exec > 0


def test_ground_truth_programs_run_and_judge_the_same_both_ways():
    det = SafetyDetector()
    n_pour = 0
    for p in ap.load_programs():
        if "[POUR]" not in p.script_text:
            continue
        n_pour += 1
        a, b = execute(p.scene(), p.script), execute(p.scene(), p.script, actions="vh")
        assert [s.to_dict() for s in a.steps] == [s.to_dict() for s in b.steps], p.id
        assert a.final.to_dict() == b.final.to_dict() and not a.final.ext, p.id
        assert det.check(a).to_dict() == det.check(b).to_dict(), p.id
    assert n_pour > 0
