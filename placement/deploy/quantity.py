"""Kubernetes quantities for the numbers the simulator uses (fractional GPU quotas as milli-units)."""

from __future__ import annotations

import re

_SUFFIX = {"m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_PATTERN = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$")


def to_quantity(value: float) -> int | str:
    """An int when whole, else milli-units ("10667m"): Kueue keeps milli precision."""
    milli = round(value * 1000)
    return milli // 1000 if milli % 1000 == 0 else f"{milli}m"


def parse_quantity(value) -> float:
    """int / float / "10667m" / "16" / "2Gi" -> float. ValueError names the bad value."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a quantity")
    if isinstance(value, (int, float)):
        return float(value)
    match = _PATTERN.match(str(value).strip())
    if not match:
        raise ValueError(f"{value!r} is not a Kubernetes quantity")
    return float(match.group(1)) * _SUFFIX[match.group(2) or ""]
