"""``python -m safebeal.train`` / ``accelerate launch -m safebeal.train``: the ``safebeal train`` command on its own.

    accelerate launch --config_file configs/accelerate/ddp.yaml -m safebeal.train \
        --method safe-align --model org/name --data pairs/ --out runs/sa
"""

from __future__ import annotations


def main() -> None:
    from safebeal.align.commands import standalone_app

    standalone_app()()


if __name__ == "__main__":
    main()
