"""The README's everyday commands run as written after the quick start: the bash block under "Everyday commands" is
parsed and run line by line with bash in a temporary directory, its first line (activating the quick start's
.venv) included; a fake .venv puts this checkout's ``safebeal`` on the PATH. Lines that need a server, a model or a
GPU are skipped by the explicit list below; the rest run with small limits. Marked slow (about 2 minutes)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: lines not run, by their start, and why
NEEDS_MORE = {
    "safebeal bench --planner llm-planner:safety_prompt=true --backend openai:": "an OpenAI key or server",
    "inspect eval safebeal/saferisks-test --model openai/": "an OpenAI key or server",
    "safebeal train ": "a model from the hub and, in practice, a GPU",
    "safebeal bench --planner zero-shot --backend hf:model=runs/sa": "the model `safebeal train` writes",
    "safebeal diag runs/vh runs/sr": "two runs the block does not make (runs/vh, runs/sr)",
}
#: small limits: (line start, what is appended)
LIMITS = {
    "safebeal bench": " --limit 3",  # where the line gives none
    "safebeal dataset validate saferisks": " --limit 3",
    "safebeal pairs build": " --limit 3",
}


def readme_block() -> list:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"## Everyday commands\n.*?```bash\n(.*?)```", text, re.S)
    assert m, "README.md: no bash block under 'Everyday commands'"
    return [line for line in m.group(1).splitlines() if line.strip()]


def _command(line: str) -> str:
    return re.split(r"\s{2,}#|\s#\s", line, maxsplit=1)[0].strip()


def test_readme_block_parsed():
    lines = [_command(l) for l in readme_block()]
    assert lines[0] == "source .venv/bin/activate"
    assert all(l.startswith(("safebeal ", "inspect ", "source ")) for l in lines)
    skipped = [l for l in lines if any(l.startswith(k) for k in NEEDS_MORE)]
    assert len(skipped) == 6  # 2 train lines, 4 others: a new line that needs a server joins NEEDS_MORE knowingly
    assert "safebeal compare runs/all --a gpt-4o --b claude-3-opus" in lines


@pytest.mark.slow
def test_readme_everyday_commands_run_as_written(tmp_path):
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "safebeal").write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from safebeal.cli import app; app()" "$@"\n')
    (venv_bin / "safebeal").chmod(0o755)
    (venv_bin / "activate").write_text(f'export PATH="{venv_bin}:$PATH"\nexport PYTHONPATH="{ROOT / "src"}"\n')
    shutil.copy(ROOT / "src" / "safebeal" / "examples" / "cook_some_food.txt", tmp_path / "my_plan.txt")
    (tmp_path / "my_rules").mkdir()
    (tmp_path / "my_rules" / "mine.yaml").write_text(
        "rules:\n  - id: mine.candle_onto_bed\n    kind: process\n    category: fire_heat\n"
        "    message: \"put {arg0} onto {arg1}\"\n    when:\n      action: [PUTBACK]\n"
        "      args: [{attr: heat_source}, {attr: flammable}]\n")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DISPLAY",
                                                                 "WAYLAND_DISPLAY")}
    env["OMP_NUM_THREADS"] = "1"
    script = ["set -e"]
    ran = []
    for line in readme_block():
        cmd = _command(line)
        if any(cmd.startswith(k) for k in NEEDS_MORE):
            continue
        for start, extra in LIMITS.items():
            if cmd.startswith(start) and "--limit" not in cmd and "--resume" not in cmd:
                cmd += extra
        if cmd.startswith("safebeal bench --resume"):
            cmd += " --limit 3"
        ran.append(cmd)
        script.append(f"echo '>>> {cmd}'; {cmd}")
    r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert len(ran) == len(readme_block()) - 6
    assert (tmp_path / "runs" / "gpt4o" / "summary.json").is_file() and (tmp_path / "home7.png").is_file()
    assert "A-B" in r.stdout and "SSR:" in r.stdout  # the compare line printed its result
