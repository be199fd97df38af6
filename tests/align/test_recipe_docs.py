"""The documented command lines cannot drift: every ``safebeal ...``, ``python -m safebeal.train ...`` and
``accelerate launch ...`` line in the docs' shell blocks uses only flags its command has (read from the typer
CLI's click objects and accelerate's own parser), every repository file it names exists, and every training
config it passes with ``--config`` loads."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

ROOT = Path(__file__).parents[2]
#: the docs whose commands are checked
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
SHELL = ("", "bash", "sh", "shell", "console")
REPO_DIRS = ("configs/", "examples/", "benchmarks/", "audits/", "experiments/", "scripts/")


def shell_lines(path: Path) -> Iterator[Tuple[int, str]]:
    """(line number, logical command line) of every fenced shell block; continuation lines joined."""
    fence, start, buf = None, 0, ""
    for no, line in enumerate(path.read_text().splitlines(), start=1):
        m = re.match(r"^\s*```(\w*)", line)
        if m:
            fence = None if fence is not None else m.group(1).lower()
            buf = ""
            continue
        if fence is None or fence not in SHELL:
            continue
        text = line.strip()
        if not buf:
            start = no
        if text.endswith("\\"):
            buf += text[:-1] + " "
            continue
        yield start, (buf + text).strip()
        buf = ""


def commands(line: str) -> Iterator[List[str]]:
    """The commands of one line (split at ``&&``, ``;`` and ``|``), as tokens with placeholders' brackets removed."""
    try:
        tokens = shlex.split(line, comments=True)
    except ValueError:
        return
    cmd: List[str] = []
    for t in tokens + ["&&"]:
        if t in ("&&", ";", "|", "||"):
            while cmd and re.match(r"^[A-Z_]+=", cmd[0]):  # VAR=value prefixes
                cmd.pop(0)
            if cmd:
                yield cmd
            cmd = []
        else:
            t = t.strip("[]")
            if t and t != "...":
                cmd.append(t)


def click_root():
    import typer.main

    from safebeal.cli import app

    return typer.main.get_command(app)


def options_of(command) -> set:
    out = {"--help"}
    for p in command.params:
        out.update(getattr(p, "opts", []))
        out.update(getattr(p, "secondary_opts", []))
    return out


def check_flags(command, args: List[str], where: str) -> List[str]:
    known = options_of(command)
    bad = []
    for t in args:
        if t.startswith("-") and not re.match(r"^-\d", t):
            name = t.split("=", 1)[0]
            if name not in known:
                bad.append(f"{where}: {command.name} has no option {name}")
    return bad


def resolve_safebeal(args: List[str]):
    """(click command, its arguments) for ``safebeal <group> <sub> ...``."""
    cmd = click_root()
    rest = list(args)
    while rest and isinstance(getattr(cmd, "commands", None), dict) and rest[0] in cmd.commands:  # typer's own click
        cmd = cmd.commands[rest.pop(0)]
    return cmd, rest


def repo_files(args: List[str]) -> List[str]:
    out = []
    for t in args:
        value = t.split("=", 1)[1] if t.startswith("-") and "=" in t else t
        if value.startswith(REPO_DIRS) and not any(c in value for c in "<>*"):
            out.append(value)
    return out


def check_command(tokens: List[str], where: str) -> Tuple[List[str], bool]:
    """(problems, checked?) of one command's tokens."""
    if tokens[:1] == ["safebeal"]:
        cmd, rest = resolve_safebeal(tokens[1:])
        return check_flags(cmd, rest, where) + check_files(rest, where), True
    if tokens[:3] == ["python", "-m", "safebeal.train"]:
        cmd, _ = resolve_safebeal(["train"])
        return check_flags(cmd, tokens[3:], where) + check_files(tokens[3:], where), True
    if tokens[:2] == ["accelerate", "launch"]:
        from accelerate.commands.launch import launch_command_parser

        own = set(launch_command_parser()._option_string_actions)
        args = tokens[2:]
        try:
            i = next(j for j, t in enumerate(args) if t in ("-m", "--module"))
        except StopIteration:
            return [f"{where}: accelerate launch without -m safebeal.train"], True
        problems = [f"{where}: accelerate launch has no option {t.split('=')[0]}"
                    for t in args[:i] if t.startswith("-") and t.split("=")[0] not in own]
        if args[i + 1:i + 2] != ["safebeal.train"]:
            return problems + [f"{where}: accelerate launch -m {args[i + 1:i + 2]}, not safebeal.train"], True
        cmd, _ = resolve_safebeal(["train"])
        return problems + check_files(args[:i], where) + check_flags(cmd, args[i + 2:], where) \
            + check_files(args[i + 2:], where), True
    return [], False


def check_files(args: List[str], where: str) -> List[str]:
    from safebeal.align.config import ConfigError, build_config

    problems = [f"{where}: {f} does not exist" for f in repo_files(args) if not (ROOT / f).exists()]
    for i, t in enumerate(args[:-1]):
        if t in ("--config", "-c") and args[i + 1].startswith("configs/") and (ROOT / args[i + 1]).exists():
            try:
                build_config(None, ROOT / args[i + 1], validate=False)
            except ConfigError as exc:
                problems.append(f"{where}: {exc}")
    return problems


def all_commands():
    for doc in DOCS:
        for no, line in shell_lines(doc):
            for tokens in commands(line):
                yield f"{doc.relative_to(ROOT)}:{no}", tokens


def test_every_documented_command_uses_flags_and_files_that_exist():
    pytest.importorskip("accelerate")
    problems, checked = [], []
    for where, tokens in all_commands():
        bad, ok = check_command(tokens, where)
        problems += bad
        if ok:
            checked.append((where, tokens))
    assert not problems, "\n".join(problems)
    # the GPU recipe is among the checked lines: accelerate + ZeRO-3 + the chained method, and vLLM evaluation
    recipe = [t for w, t in checked if w.startswith("docs/safe_align.md") and t[:2] == ["accelerate", "launch"]
              and "configs/train/sft_safe_align_8b.yaml" in t]
    assert recipe and "configs/accelerate/zero3.yaml" in recipe[0]
    from safebeal.align.config import build_config

    assert build_config(None, ROOT / "configs/train/sft_safe_align_8b.yaml", validate=False).method == "sft+safe-align"
    assert any(w.startswith("docs/safe_align.md") and t[:2] == ["safebeal", "bench"]
               and any(x.startswith("vllm:") for x in t) for w, t in checked)
    assert len(checked) > 60


def test_the_checker_catches_a_wrong_flag_and_a_missing_file():
    bad, ok = check_command(shlex.split("safebeal train --method sft --learning-rate 1e-4"), "x:1")
    assert ok and bad == ["x:1: train has no option --learning-rate"]
    bad, _ = check_command(shlex.split("safebeal pairs stats out/ --json --jsn"), "x:3")
    assert bad == ["x:3: stats has no option --jsn"]
    assert check_command(["ls", "-la"], "x:4") == ([], False)
    lines = list(commands("OMP_NUM_THREADS=1 safebeal train --help && safebeal bench [--resume]  # comment"))
    assert lines == [["safebeal", "train", "--help"], ["safebeal", "bench", "--resume"]]
    pytest.importorskip("accelerate")  # the [train] extra: accelerate's own launch options
    bad, _ = check_command(shlex.split("accelerate launch --config_file configs/accelerate/zero9.yaml --num_gpus 8 "
                                       "-m safebeal.train --method safe-align --alpha=0.3 --sft-lr 1"), "x:2")
    assert bad == ["x:2: accelerate launch has no option --num_gpus", "x:2: configs/accelerate/zero9.yaml does not exist"]
