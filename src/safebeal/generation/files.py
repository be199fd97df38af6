"""The SafeRisks build's output files: the names of the files written beside the data file (:func:`sidecar`) and
deterministic gzip (:func:`write_gz`: no file name, mtime 0, so a rebuild is byte-identical). Used by the build
(:mod:`safebeal.generation.build`), the explicit-pairs build and the search audit's sidecar
(:mod:`safebeal.generation.audit`).
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path


def sidecar(out: Path, kind: str) -> Path:
    """``saferisks.jsonl.gz`` -> ``saferisks.<kind>``."""
    name = out.name
    for suf in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suf)
    return out.with_name(f"{name}.{kind}")


def write_gz(path: Path, data: bytes) -> None:
    """Gzip ``data`` into ``path`` deterministically (no file name, mtime 0): a rebuild is byte-identical."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    path.write_bytes(buf.getvalue())
