#!/usr/bin/env bash
# The GPU recipe, tried (issue 32, item 5): a few Safe-Align LoRA steps on CUDA in float32 and bf16 against the CPU
# path, and greedy generation with the hf and vllm backends. Details: benchmarks/gpu_check.py.
#   bash benchmarks/gpu_check.sh [OUT]        (pip install -e '.[train]', plus '.[vllm]' for the vllm check)
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
python benchmarks/gpu_check.py --out "${1:-gpu_check}"
