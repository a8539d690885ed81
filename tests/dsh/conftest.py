"""The dialect's tests reuse the generated runs of the other protocols' tests (tests/aisdk, tests/agui)."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parent.parent
for folder in ("aisdk", "agui", "demo"):
    if str(_TESTS / folder) not in sys.path:
        sys.path.append(str(_TESTS / folder))
