"""Datasets and task-success checking."""
