"""The small-scale reproduction study (``experiments/small_scale/run.py``): a planner trained from scratch,
aligned with LoRA-SFT, DPO, SimPO and Safe-Align, and benchmarked."""
