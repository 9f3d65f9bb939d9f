"""Input validation shared by the models: every public function raises
``ValueError`` naming the parameter and the allowed range."""

from __future__ import annotations

import math
import numbers

import numpy as np


def positive(name: str, value, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float, or raise if it is not a finite number > 0 (>= 0)."""
    bound = ">= 0" if allow_zero else "> 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite real number {bound}, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be a finite real number {bound}, got {value!r}")
    return value


def positive_int(name: str, value, *, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def sizes(name: str, values, *, allow_zero: bool = True) -> np.ndarray:
    """Return message sizes as a float array, or raise if any is negative, NaN or infinite."""
    bound = ">= 0" if allow_zero else "> 0"
    raw = np.asarray(values)
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be real numbers {bound}, got {values!r}")
    arr = raw.astype(float)
    bad = ~np.isfinite(arr) | (arr < 0) | ((arr == 0) & (not allow_zero))
    if np.any(bad):
        raise ValueError(f"{name} must be finite and {bound}, got {arr[bad].ravel()[0]!r}")
    return arr


def integers(name: str, values, *, minimum: int | None = 1) -> np.ndarray:
    """Return ``values`` as an int64 array, or raise if any is not a finite whole number
    (NaN, 10.5, a string) or is below ``minimum`` (no lower bound if ``minimum`` is None)."""
    bound = "" if minimum is None else f" >= {minimum}"
    try:
        arr = np.asarray(values)
        num = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold integers{bound}, got {values!r}") from None
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold integers{bound}, got {values!r}")
    bad = ~np.isfinite(num) | (num != np.round(num))
    if minimum is not None:
        bad |= num < minimum
    if np.any(bad):
        raise ValueError(f"{name} must hold integers{bound}, got {float(num[bad].ravel()[0])!r}")
    return num.astype(np.int64)
