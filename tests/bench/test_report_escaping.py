"""report.html escapes every value a run directory supplies (issue 34, item 9): markup planted in every config,
summary and sample field of a run directory stays text when `safebeal report` rebuilds the report, in the HTML text
and (marked ``browser``) in a headless Chromium where no planted script may run."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, List, Tuple

import pytest
from typer.testing import CliRunner

from safebeal.bench.runner import RunConfig, run_bench
from safebeal.cli import app

#: each payload tries another way out: a script element, an attribute break into an element with a handler, and
#: closing the data block's script element
PAYLOADS = ("<script>window.__pwned=1;document.title='pwned'</script>",
            "\"><img src=x onerror=\"window.__pwned=2;document.title='pwned'\">",
            "'></script><script>window.__pwned=3;document.title='pwned'</script>")
PLANNERS = ["replay:gpt-3.5-turbo-0125", "replay:gpt-4o-2024-05-13"]


def _plant(value: Any, k: int) -> Any:
    """Every string (and every number or bool of a config or summary, which the report prints) replaced by a
    payload; dict keys too, except the few the loader needs."""
    if isinstance(value, dict):
        return {key: _plant(v, k + i) for i, (key, v) in enumerate(value.items())}
    if isinstance(value, list):
        return [_plant(v, k + i) for i, v in enumerate(value)]
    return PAYLOADS[k % len(PAYLOADS)] + str(value)


def _plant_sample(rec: dict, labels: dict) -> dict:
    """A sample's string fields planted, its typed fields (bools, numbers) kept so that the record still loads."""
    out = {}
    for i, (key, v) in enumerate(rec.items()):
        if key == "planner":
            out[key] = labels[v]
        elif isinstance(v, str):
            out[key] = PAYLOADS[i % 3] + v
        elif key in ("steps", "violations", "parse_error", "error") and v:
            out[key] = _plant_typed(v, i)
        elif key == "prompt" or (key == "raw_output" and v is None):
            out[key] = [{"role": PAYLOADS[0], "content": PAYLOADS[1]}] if key == "prompt" else PAYLOADS[2]
        else:
            out[key] = v
    return out


def _plant_typed(value: Any, k: int) -> Any:
    if isinstance(value, dict):
        return {key: (v if key in ("index", "ok", "step") and not isinstance(v, str) else _plant_typed(v, k + i))
                for i, (key, v) in enumerate(value.items())}
    if isinstance(value, list):
        return [_plant_typed(v, k + i) for i, v in enumerate(value)]
    if isinstance(value, str):
        return PAYLOADS[k % 3] + value
    return value


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("escaping") / "run"
    run_bench(RunConfig(planners=PLANNERS, dataset="virtualhome", out=str(out), limit=6, workers=1))
    labels = {p: PAYLOADS[i] + p for i, p in enumerate(PLANNERS)}
    config = json.loads((out / "config.json").read_text())
    planted = _plant(config, 0)
    planted["planners"] = [labels[p] for p in PLANNERS]
    planted["dataset"] = PAYLOADS[1] + "virtualhome"  # a string still (a run's config names its dataset)
    (out / "config.json").write_text(json.dumps(planted))
    summary = json.loads((out / "summary.json").read_text())
    (out / "summary.json").write_text(json.dumps({labels[k]: _plant(v, 1) for k, v in summary.items()}))
    samples = [json.loads(l) for l in (out / "samples.jsonl").read_text().splitlines()]
    # a violation, a parse error and a generation error to show, so that each view of the browser has text to escape
    samples[0]["violations"] = [{"rule_id": "fire.x", "category": "fire_hazard", "kind": "process", "step": 0,
                                 "message": "m", "objects": [{"id": 1, "name": "n"}]}]
    samples[0]["safe"] = False
    samples[1]["parse_error"] = {"kind": "parse", "message": "bad"}
    samples[2]["generation_error"] = "boom"
    (out / "samples.jsonl").write_text("".join(json.dumps(_plant_sample(s, labels)) + "\n" for s in samples))
    r = CliRunner().invoke(app, ["report", str(out), "--no-png"])
    assert r.exit_code == 0, r.output
    return out


class _Elements(HTMLParser):
    """Every element the page holds, with its attributes, and the text of its script elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: List[Tuple[str, List[Tuple[str, Any]]]] = []
        self.scripts: List[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def test_every_planted_value_is_text_in_the_html(planted_run):
    from safebeal.bench.viewer import _SCRIPT

    doc = (planted_run / "report.html").read_text()
    # the planted values are there (so the test looks at the right page) ...
    assert "&lt;script&gt;window.__pwned=1" in doc
    assert "&quot;&gt;&lt;img src=x onerror=" in doc
    # ... and none became markup: no element, event handler or script of theirs
    page = _Elements()
    page.feed(doc)
    tags = [t for t, _ in page.tags]
    assert "img" not in tags
    assert tags.count("script") == 2  # the data block and the browser's own script
    assert [n for _, attrs in page.tags for n, _ in attrs if n.startswith("on")] == []
    assert page.scripts[1] == _SCRIPT
    data = json.loads(page.scripts[0])  # the sample data still parse, the planted labels in them as data
    assert data["order"] == [PAYLOADS[1] + PLANNERS[1], PAYLOADS[0] + PLANNERS[0]]
    assert len(data["samples"]) == 12
    assert data["samples"][0]["raw_output"].startswith(PAYLOADS[0])


def test_the_config_fields_the_page_prints_are_escaped(planted_run):
    doc = (planted_run / "report.html").read_text()
    head = doc.split("<table id=\"leaderboard\">")[0]
    # n_tasks and strict (written unescaped before), the dataset and the rules digest
    assert head.count("&lt;script&gt;") + head.count("&lt;img") >= 4, head


# -- in a real browser ---------------------------------------------------------------------------------------
@pytest.mark.browser
def test_no_planted_script_runs_in_chromium(planted_run):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the browser test's driver)")
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    if not browser or not shutil.which("chromedriver"):
        pytest.skip("no chromium and chromedriver on PATH (apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--host-resolver-rules=MAP * ~NOTFOUND"):
        opts.add_argument(a)
    opts.binary_location = browser
    d = webdriver.Chrome(options=opts, service=Service(shutil.which("chromedriver")))
    try:
        d.get(Path(planted_run / "report.html").resolve().as_uri())
        assert d.find_element(By.ID, "count").text == "12 of 12 samples"  # the page's own script ran
        for row in range(3):  # open samples: the detail view, its steps, violations and errors
            d.find_elements(By.CSS_SELECTOR, "#samples tbody tr")[row].click()
        d.find_element(By.ID, "compare-btn").click()
        assert d.execute_script("return window.__pwned === undefined")
        assert d.title == "safebeal report"
        assert not d.find_elements(By.CSS_SELECTOR, "img")
    finally:
        d.quit()
