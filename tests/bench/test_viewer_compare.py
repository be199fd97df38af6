"""Compare mode of the sample browser shows why a planner has no plan, with the message (a parse error's text, a
generation error's), not only the tag "parse error". The page's own compareView runs in node on made-up samples
with the DOM stubbed; skipped without node."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from safebeal.bench.records import Episode
from safebeal.bench.viewer import _SCRIPT, sample_rows

NODE = shutil.which("node")


def _function(name: str) -> str:
    m = re.search(rf"^function {name}\(.*?^\}}\n", _SCRIPT, re.S | re.M)
    assert m, name
    return m.group(0)


@pytest.mark.skipif(NODE is None, reason="needs node")
def test_compare_columns_show_the_parse_error_message():
    eps = [Episode(planner="A", dataset="d", task_id="t1", raw_output="I would first look around the room",
                   parse_error={"kind": "parse", "message": "no action line: expected '[ACTION] <object> (id)'"}),
           Episode(planner="B", dataset="d", task_id="t1", raw_output=None, generation_error="timeout after 3 retries"),
           Episode(planner="C", dataset="d", task_id="t1", raw_output="[WALK] <sofa> (1)", executable=True)]
    rows = sample_rows([e.model_dump() for e in eps])
    js = (
        "const el = (tag, attrs, ...kids) => ({tag, attrs, kids: kids.flat().filter(k => k !== null && k !== undefined"
        " && k !== false)});\n"
        "const text = n => (n && typeof n === 'object') ? n.kids.map(text).join(' ') : String(n);\n"
        f"const S = {json.dumps(rows)};\nconst rank = {{A: 0, B: 1, C: 2}};\nconst outLabels = {{}};\n"
        "function stepsView(s){ return []; }\n"
        + _function("planNote") + _function("compareView")
        + "const cols = compareView('t1')[3].kids;\n"
        "console.log(JSON.stringify(cols.map(c => [c.attrs['data-planner'], text(c)])));\n")
    out = subprocess.run([NODE, "-e", js], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    cols = dict(json.loads(out.stdout))
    assert "parse error (parse): no action line: expected '[ACTION] <object> (id)'" in cols["A"]
    assert "generation error: timeout after 3 retries" in cols["B"]
    assert "error" not in cols["C"]
