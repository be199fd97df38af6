"""The plans floor: what every layer shares about scripts, below datasets (docs/design/layers.md).

``steps`` (the step records and plan errors), ``parse`` (planner output -> steps), ``grounding`` (object names ->
scene ids) and ``rouge`` (the one Rouge-L). Import from the modules; this ``__init__`` re-exports nothing.
"""
