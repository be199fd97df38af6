#!/usr/bin/env bash
# The README's test command: install safebeal with its dev and train extras, then run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[dev,train]"
python -m pytest -q -n 2 --durations=15 "$@"
