import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "experiments" / "small_scale"
if str(STUDY) not in sys.path:
    sys.path.insert(0, str(STUDY))
