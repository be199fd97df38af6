"""safebeal: measure and improve the task-planning safety of LLM-based embodied agents."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("safebeal")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+local"

__all__ = ["__version__"]
