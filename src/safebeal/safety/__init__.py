"""The safety detector: hazard taxonomy, object hazard knowledge, declarative rules."""

from safebeal.safety.detector import Monitor, SafetyDetector
from safebeal.safety.knowledge import ObjectKB, UnknownClassError, build_kb
from safebeal.safety.rules import Rule, RuleSet, load_rules
from safebeal.safety.taxonomy import CATEGORIES, KINDS, SLUGS
from safebeal.safety.verdict import Verdict, Violation
from safebeal.safety.yamlio import YamlError

__all__ = ["CATEGORIES", "KINDS", "Monitor", "ObjectKB", "Rule", "RuleSet", "SLUGS", "SafetyDetector",
           "UnknownClassError", "Verdict", "Violation", "YamlError", "build_kb", "load_rules"]
