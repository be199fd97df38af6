"""Reading JSON-lines files (plain or gzip), one place for every reader in safebeal.

    for where, obj in iter_jsonl(path, error=MyError):   # where = "path:line"
        ...

Blank lines are skipped. Errors are raised as ``error`` (a :class:`SafebealError` subclass of the caller's, so its
own ``except`` clauses keep working) with a message naming the file and the 1-based line:
``path:3: not valid JSON (Expecting value at column 1)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Tuple, Type, Union

from safebeal.capped import MAX_DATA_BYTES, read_capped_text
from safebeal.errors import SafebealError


def read_text(path: Union[str, Path], error: Type[Exception] = SafebealError, cap: int = MAX_DATA_BYTES) -> str:
    """The file's text (gunzipped when it starts with the gzip magic bytes), at most ``cap`` bytes of it, from a
    device or pipe too (:func:`safebeal.capped.read_capped`)."""
    return read_capped_text(path, cap, error, gunzip=True)


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
