"""The consoles every ``safebeal`` command prints through, and the one way a command fails on bad input.

Off a terminal (pipes, CI logs, tests) lines are not wrapped at 80 columns: an error names a file path, a line
and a rule id, and must stay one greppable line; tables get room for their columns.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console

WIDTH_OFF_TERMINAL = 200

console = Console(width=None if sys.stdout.isatty() else WIDTH_OFF_TERMINAL)
err_console = Console(stderr=True, soft_wrap=True)


def fail(exc: BaseException, code: int = 2) -> NoReturn:
    """Print ``error: <message>`` on one line to stderr and exit with ``code`` (2: bad input)."""
    err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
    raise typer.Exit(code)
