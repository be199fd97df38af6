"""Safety commands: ``safebeal rules list|validate``. (``safebeal check`` takes ``--rules``, ``--objects`` and
``--strict`` in ``safebeal.cli``.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from safebeal.console import console, fail, plain
from safebeal.errors import SafebealError

rules_app = typer.Typer(no_args_is_help=True, help="List and validate hazard rules.")

RULES_OPT = typer.Option(None, "--rules", "-r", help="Extra rule file or folder of *.yaml (repeatable).")
OBJECTS_OPT = typer.Option(None, "--objects", help="Extra object hazard file (repeatable; later files override).")


def _display_path(source: str) -> str:
    """Shipped files as ``safebeal/safety/data/rules/x.yaml``, others relative to the working folder if inside it."""
    from safebeal.resources import PACKAGE_DATA

    p = Path(source).resolve()
    for base in (PACKAGE_DATA.parent, Path.cwd()):
        try:
            return str(p.relative_to(base))
        except ValueError:
            continue
    return source


@rules_app.command("list")
def rules_list(
    rules: Optional[List[Path]] = RULES_OPT,
    objects: Optional[List[Path]] = OBJECTS_OPT,
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Every loaded rule: id, kind, category, message and where it is defined (file:line)."""
    from safebeal.safety.rules import load_rules

    try:
        rs = load_rules(rules or (), objects or ())
    except SafebealError as exc:
        fail(exc)
    rows = [r.summary() for r in rs.rules]
    if json_out:
        print(json.dumps(rows, indent=1))
        return
    t = Table("id", "kind", "category", "message", "source", title=f"{len(rows)} rules")
    for i in (0, 4):
        t.columns[i].no_wrap = True
    for r in rows:
        path, _, line = r["source"].rpartition(":")
        t.add_row(plain(r["id"]), r["kind"], r["category"], plain(r["message"]), plain(f"{_display_path(path)}:{line}"))
    console.print(t)


@rules_app.command("validate")
def rules_validate(
    paths: List[Path] = typer.Argument(..., help="Rule files or folders to check (with the shipped rules loaded too)."),
    objects: Optional[List[Path]] = OBJECTS_OPT,
) -> None:
    """Validate rule files: exit 0 with a count when valid, exit 2 with file:line (rule id): message otherwise."""
    from safebeal.safety.rules import load_rules

    try:
        rs = load_rules(paths, objects or ())
    except SafebealError as exc:
        fail(exc)
    given = {str(p) for p in paths}
    mine = [r for r in rs.rules if r.source in given or any(r.source.startswith(g.rstrip("/") + "/") for g in given)]
    files = sorted({r.source for r in mine})
    console.print(f"[green]valid[/]: {len(mine)} rules in {len(files)} file(s)"
                      f" ({sum(r.kind == 'process' for r in mine)} process, {sum(r.kind == 'termination' for r in mine)} termination)")


def register(app: typer.Typer) -> None:
    app.add_typer(rules_app, name="rules")
