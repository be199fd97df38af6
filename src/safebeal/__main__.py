"""``python -m safebeal``: the same as the ``safebeal`` command."""

from safebeal.cli import app

if __name__ == "__main__":
    app()
