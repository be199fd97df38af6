"""Reading JSON-lines files (plain or gzip), one place for every reader in safebeal.

    for where, obj in iter_jsonl(path, error=MyError):   # where = "path:line"
        ...

Blank lines are skipped. Errors are raised as ``error`` (a :class:`SafebealError` subclass of the caller's, so its
own ``except`` clauses keep working) with a message naming the file and the 1-based line:
``path:3: not valid JSON (Expecting value at column 1)``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Iterator, Tuple, Type, Union

from safebeal.errors import SafebealError


def read_text(path: Union[str, Path], error: Type[Exception] = SafebealError) -> str:
    """The file's text (gunzipped when it starts with the gzip magic bytes)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise error(f"{p}: file not found") from None
    except OSError as exc:
        raise error(f"{p}: cannot read ({exc.strerror or exc})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise error(f"{p}: corrupt gzip data ({exc})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def iter_jsonl(path: Union[str, Path], error: Type[Exception] = SafebealError,
               objects_only: bool = True) -> Iterator[Tuple[str, Any]]:
    """Yield ``("path:line", value)`` for every non-blank line. With ``objects_only`` each value must be a JSON
    object (a dict)."""
    p = Path(path)
    for n, line in enumerate(read_text(p, error).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if objects_only and not isinstance(obj, dict):
            raise error(f"{where}: expected a JSON object per line, got {type(obj).__name__}")
        yield where, obj
