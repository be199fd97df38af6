"""Safe-Align: safety preference pairs (pairs.py, mutations.py), losses, trainers and configs."""
