"""Reading an input with a size cap: the one way safebeal reads a file a user names (plans, rule and object YAML,
JSON-lines datasets and recorded outputs, scenes, run directories' JSON).

    data = read_capped(path, MAX_YAML_BYTES, YamlError, what="rule file")

At most ``cap + 1`` bytes are read, whatever the path is: a regular file, a device (``/dev/zero``, ``/dev/urandom``)
or a pipe, so an endless input ends at once in one error line instead of reading until memory runs out (a size
check on ``stat()`` alone sees 0 bytes for a device). Gzip data (``gunzip=True``) is capped after decompression too.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Callable, Type, Union

from safebeal.errors import SafebealError

ErrorType = Union[Type[Exception], Callable[[str], Exception]]
#: a YAML file users write (rules, object hazards, action extensions, homes, training configs): a few KB each
MAX_YAML_BYTES = 2 * 2**20
#: a data file (a dataset, recorded outputs, a run's samples): larger ones are refused
MAX_DATA_BYTES = 512 * 2**20


class CappedReadError(SafebealError):
    """An input that could not be read or is over its cap; :attr:`reason` is the message without the path (for
    callers whose error types name the file themselves, as :class:`safebeal.safety.yamlio.YamlError`)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def _size(n: int) -> str:
    return f"{n // 2**20} MB" if n >= 2**20 and n % 2**20 == 0 else f"{n:,} bytes"


def too_large(cap: int, what: str = "file") -> str:
    """Why an input over its cap is refused (the one wording everywhere)."""
    return f"{what} over {_size(cap)}: refused (the cap holds for devices and pipes too)"


def _fail(error: ErrorType, p: Path, reason: str) -> Exception:
    if error is CappedReadError:
        return CappedReadError(f"{p}: {reason}", reason)
    return error(f"{p}: {reason}")


def read_capped(path: Union[str, Path], cap: int, error: ErrorType = CappedReadError, what: str = "file",
                gunzip: bool = False) -> bytes:
    """The bytes of ``path``, at most ``cap`` of them; over it, not found or unreadable: ``error(message)`` with a
    message naming the path. With ``gunzip``, data starting with the gzip magic bytes are decompressed (also
    capped at ``cap``)."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            raw = f.read(cap + 1)
    except FileNotFoundError:
        raise _fail(error, p, f"{what} not found") from None
    except IsADirectoryError:
        raise _fail(error, p, "is a directory, not a file") from None
    except OSError as exc:
        raise _fail(error, p, f"cannot read ({exc.strerror or exc})") from None
    if len(raw) > cap:
        raise _fail(error, p, too_large(cap, what))
    if gunzip and raw[:2] == b"\x1f\x8b":
        raw = _gunzip(raw, cap, error, p, what)
    return raw


def _gunzip(raw: bytes, cap: int, error: ErrorType, p: Path, what: str) -> bytes:
    """Every gzip member of ``raw`` decompressed, stopping past ``cap`` bytes of output (a gzip bomb)."""
    out = b""
    while raw:
        d = zlib.decompressobj(wbits=31)
        try:
            out += d.decompress(raw, cap + 1 - len(out))
        except zlib.error as exc:
            raise _fail(error, p, f"corrupt gzip data ({exc})") from None
        if len(out) > cap or (d.unconsumed_tail and not d.eof):
            raise _fail(error, p, too_large(cap, what + " (decompressed)"))
        if not d.eof:
            raise _fail(error, p, "corrupt gzip data (cut off)")
        raw = d.unused_data
    return out


def read_capped_text(path: Union[str, Path], cap: int, error: ErrorType = CappedReadError, what: str = "file",
                     gunzip: bool = False) -> str:
    """:func:`read_capped`, decoded as UTF-8 (not UTF-8: ``error`` naming the byte)."""
    raw = read_capped(path, cap, error, what, gunzip)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(error, Path(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
