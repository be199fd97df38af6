"""SafeRisks generation: hazard seeds, the procedural and multi-agent generators, Rouge-L deduplication
(:mod:`safebeal.plans.rouge`).

See ``docs/saferisks.md``. Entry points: :func:`safebeal.generation.build.build`,
:func:`safebeal.generation.build.validate`, :class:`safebeal.generation.multiagent.MultiAgentGenerator`.
"""
