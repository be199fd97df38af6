"""Base error type: every error safebeal raises for bad input derives from it,
so the CLI can print it cleanly instead of a traceback."""

from __future__ import annotations


class SafebealError(Exception):
    """Bad input or configuration. The message names the file, line or step."""
