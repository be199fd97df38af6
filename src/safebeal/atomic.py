"""Writing an output file atomically: the one way safebeal replaces a report, a chart, a summary or a config.

    atomic_write(path, text_or_bytes)       # raises SafebealError (or ``error``) naming the file

The data go to a temporary file beside ``path`` (``.<name>.tmp<pid>``), are fsync'd, then renamed over ``path``:
a reader, a kill or a full disk leaves the previous file or the whole new one, never a part. A failed write
(ENOSPC, EIO) removes the temporary file and is one error naming the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Type, Union

from safebeal.errors import SafebealError


def atomic_write(path: Union[str, Path], data: Union[str, bytes], hint: str = "",
                 error: Union[Type[Exception], Callable[[str], Exception]] = SafebealError) -> Path:
    """Replace ``path`` with ``data`` (text is written as UTF-8); on failure ``error("<path>: cannot write:
    <why><hint>")``, the previous file as it was."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise error(f"{path}: cannot write: {exc.strerror or exc}{hint}") from None
    return path
