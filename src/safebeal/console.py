"""The consoles every ``safebeal`` command prints through, and the one way a command fails on bad input.

Off a terminal (pipes, CI logs, tests) lines are not wrapped at 80 columns: an error names a file path, a line
and a rule id, and must stay one greppable line; tables get room for their columns.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from rich.progress import Progress

WIDTH_OFF_TERMINAL = 200

# emoji=False: ``:100:`` in a file name or a plan line is text, not an emoji
console = Console(width=None if sys.stdout.isatty() else WIDTH_OFF_TERMINAL, emoji=False)
err_console = Console(stderr=True, soft_wrap=True, emoji=False)

MAX_ERROR_CHARS = 500  #: an error line is cut to this many characters (a 1 MB plan line must not become a 1 MB error)


def one_line(message: object, limit: int = MAX_ERROR_CHARS) -> str:
    """``message`` as one line of at most ``limit`` characters: line breaks and other control characters
    shown as spaces, the middle cut out when too long."""
    s = str(message)
    s = "".join(" " if (c < " " or c == "\x7f") else c for c in s) if any(c < " " or c == "\x7f" for c in s) else s
    if len(s) > limit:
        s = s[: limit - 20] + " ... " + s[-15:]
    return s


def progress_bar(*columns: object) -> "Progress":
    """A transient progress bar on stderr, the one every command shows. Off a terminal it is disabled: there it
    would show nothing, yet rich ends it with an empty line, which came before an error raised while it ran."""
    from rich.progress import Progress

    return Progress(*columns, console=err_console, transient=True, disable=not err_console.is_interactive)


def plain(text: object) -> Text:
    """User-supplied text (a plan line, a rule message, a file name) for a Rich table or line: shown as it is,
    never read as Rich markup (``[walk]`` stays, ``[/]`` does not raise) or emoji codes (``:100:``)."""
    return Text(str(text))


def fail(exc: BaseException, code: int = 2) -> NoReturn:
    """Print ``error: <message>`` on one plain line (no markup, no emoji codes, at most
    :data:`MAX_ERROR_CHARS` characters) to stderr and exit with ``code`` (2: bad input)."""
    line = Text("error:", style="bold red")
    line.append(" " + one_line(exc, MAX_ERROR_CHARS - len("error: ")))
    err_console.print(line, highlight=False, markup=False, emoji=False, soft_wrap=True)
    raise typer.Exit(code)
