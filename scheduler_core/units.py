"""Durations and sizes as written in scenario files ("90s", "30m", "6h", "7d", "250ms"), and
:class:`DocumentModel`, the base of every model of a scenario document."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ms|s|min|m|h|d)?\s*$")


def parse_duration(value: Any) -> float:
    """Seconds from a number (already seconds) or a string with a unit suffix."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 30, '90s', '30m', '6h' or '7d'")
    if isinstance(value, (int, float)):
        v = float(value)
    elif isinstance(value, str):
        m = _RE.match(value)
        if not m:
            raise ValueError(f"{value!r} is not a duration: use a number of seconds or e.g. '90s', '30m', '6h', '7d'")
        v = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    else:
        raise ValueError("expected a duration such as 30, '90s', '30m', '6h' or '7d'")
    if not math.isfinite(v) or v < 0:
        raise ValueError("duration must be finite and >= 0")
    return v


Duration = Annotated[float, BeforeValidator(parse_duration)]


class DocumentModel(BaseModel):
    # Unknown keys are errors: a typo in a scenario must not silently change the run.
    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)
