import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the studies' own code: smallscale (experiments/small_scale), synthetic_plans (experiments/study_v2_synthetic)
for study in (ROOT / "experiments" / "small_scale", ROOT / "experiments" / "study_v2_synthetic"):
    if str(study) not in sys.path:
        sys.path.insert(0, str(study))
