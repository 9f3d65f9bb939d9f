"""Checks of the LoP paper's own arithmetic (Hoefler & Rehm), by code.

* :func:`printed_latency_send` is the paper's printed, rounded ``L_min^send,n(p)``;
  :func:`rounding_error` compares it with the same formula from the full-precision fit.
* :func:`overhead_mismatch`: the overhead subtracted there is not the o_s fit printed.
* :func:`rtt_jacobian`, :func:`identifiability`, :func:`rtt_null_direction`: λ3, λ4, λ6
  of ``t_rtt`` are not identifiable (the Jacobian has rank 5, exactly).
* :func:`first_decrease`: where a curve that should grow with n falls.
* :func:`non_pipeline_at_one`: what t_rtt(1) holds beyond its pipeline start-up term
  (negative for both printed fits: the three sections cannot all be non-negative).
* :func:`linear_fit`: the best line ``a + g p`` through a total time, LogP's shape.

Units: seconds and peers, like :mod:`netmodels.models.lop`.
"""

from __future__ import annotations

import numpy as np

from . import machines as _m
from .lop import latency, peers

#: References [5] and [6] of the paper, as printed: the same entry twice.
PRINTED_REFERENCE_5 = ("S. Fortune and J. Wyllie. Parallelism in random access machines. In STOC '78: "
                       "Proceedings of the tenth annual ACM symposium on Theory of computing, "
                       "pages 114–118. ACM Press, 1978.")
PRINTED_REFERENCE_6 = ("S. Fortune and J. Wyllie. Parallelism in random access machines. In STOC '78: "
                       "Proceedings of the tenth annual ACM symposium on Theory of computing, "
                       "pages 114–118. ACM Press, 1978.")


def printed_latency_send(p):
    """The paper's printed L_min^send,n(p) (s), with its rounded coefficients."""
    return latency(p, lambda q: 2 * np.asarray(_m.LOP_PRINTED_L_HALF_RTT(q)), _m.LOP_PRINTED_L_OVERHEAD)


def full_precision_latency_send(p):
    """The same L(p) from the full-precision RTT fit and the overhead the paper subtracts (s)."""
    return latency(p, _m.LOP_SENDRECV_RTT_MIN, _m.LOP_PRINTED_L_OVERHEAD)


def rounding_error(p):
    """``(absolute, relative)``: printed minus full-precision L(p) (s), and that over the
    full-precision L(p)."""
    printed, full = np.asarray(printed_latency_send(p)), np.asarray(full_precision_latency_send(p))
    return printed - full, (printed - full) / full


def overhead_mismatch(p):
    """The overhead subtracted in the printed L minus the printed RDMA o_s fit (s)."""
    return np.asarray(_m.LOP_PRINTED_L_OVERHEAD(p)) - np.asarray(_m.LOP_RDMAW_OS(p))


def rtt_jacobian(p, lambdas, *, relative: bool = True) -> np.ndarray:
    """Jacobian ``∂t_rtt/∂λ_k`` at peer counts ``p`` (rows) for λ1..λ6 (columns), analytic.

    With ``relative`` (default) column k is multiplied by ``λ_k`` (``∂t/∂ln λ_k``), so
    that singular values compare parameters of different units."""
    x = peers("p", p)
    l1, l2, l3, l4, l5, l6 = (float(v) for v in lambdas)
    e = np.exp(l5 * (x - l6))
    J = np.column_stack([1 / (l2 + x), -l1 / (l2 + x) ** 2, np.ones_like(x), 1 - e,
                         -l4 * (x - l6) * e, l4 * l5 * e])
    return J * np.asarray([l1, l2, l3, l4, l5, l6]) if relative else J


def identifiability(p, lambdas) -> dict:
    """Singular values of the relative Jacobian of ``t_rtt`` (units of the times), all six
    λ free and with λ6 held fixed, and the condition numbers ``s_max / s_min``."""
    J = rtt_jacobian(p, lambdas)
    s6 = np.linalg.svd(J, compute_uv=False)
    s5 = np.linalg.svd(J[:, :5], compute_uv=False)
    return {"singular_values_6": s6, "condition_6": s6[0] / s6[-1],
            "singular_values_5": s5, "condition_5": s5[0] / s5[-1]}


def rtt_null_direction():
    """``(v, Jv)``: sympy's direction v in λ-space along which ``t_rtt`` does not change,
    and ``J v`` simplified (0 for every p: λ3, λ4, λ6 are not identifiable)."""
    import sympy as sp

    p, l1, l2, l3, l4, l5, l6 = sp.symbols("p lambda1:7")
    t = l1 / (l2 + p) + l3 + l4 * (1 - sp.exp(l5 * (p - l6)))
    grad = sp.Matrix([t]).jacobian([l1, l2, l3, l4, l5, l6])
    v = sp.Matrix([0, 0, -l4 * l5, l4 * l5, 0, 1])
    return v, sp.simplify((grad * v)[0])


def identifiable_combinations(lambdas) -> tuple:
    """``(λ3 + λ4, λ4 exp(-λ5 λ6))`` in seconds: what data can determine of λ3, λ4, λ6."""
    l1, l2, l3, l4, l5, l6 = (float(v) for v in lambdas)
    return l3 + l4, l4 * np.exp(-l5 * l6)


def non_pipeline_at_one(lambdas) -> float:
    """``t_rtt(1) - λ1 / (λ2 + 1)`` (s): what the processing and saturation sections add
    at one peer, ``(λ3 + λ4) - λ4 e^(-λ5 λ6) e^(λ5)``.

    It depends on λ3, λ4, λ6 only through :func:`identifiable_combinations`, so every
    parameter set giving the same curve gives the same value.  With ``λ4 > 0``, ``λ5 < 0``
    (both printed fits) it is also the largest λ3 of any such set whose saturation term
    ``λ4 (1 - e^(λ5 (p - λ6)))`` is >= 0 for every p >= 1 (that needs ``λ6 <= 1``): if it
    is negative, no split of the curve into a non-negative processing constant and a
    non-negative saturation exists."""
    l1, l2, l3, l4, l5, l6 = (float(v) for v in lambdas)
    c, A = identifiable_combinations(lambdas)
    return c - A * np.exp(l5)


def printed_rounding_spread(func, lambdas, decimals: int = 4) -> float:
    """Largest change of ``func(lambdas)`` when one λ at a time moves by half a unit of the
    last printed digit (``decimals`` digits, in µs for λ1, λ3, λ4 and in peers for λ2, λ5,
    λ6, as the paper prints them): how much of a number derived from the printed fit is
    resolved at all.  Same units as ``func``."""
    lam = [float(v) for v in lambdas]
    half = 0.5 * 10.0 ** -decimals
    steps = [half * _m.US, half, half * _m.US, half * _m.US, half, half]
    base = func(tuple(lam))
    worst = 0.0
    for k, h in enumerate(steps):
        for sign in (-1, 1):
            moved = list(lam)
            moved[k] += sign * h
            worst = max(worst, abs(func(tuple(moved)) - base))
    return worst


def linear_fit(p, total) -> tuple:
    """``(a, g, worst)``: least-squares line ``a + g p`` through ``total(p)`` (s) and its
    largest relative deviation from the points (LogP's 1:p time is such a line in p)."""
    x = peers("p", p)
    y = np.asarray(total, dtype=float)
    g, a = np.polyfit(x, y, 1)
    return float(a), float(g), float(np.max(np.abs((a + g * x) / y - 1)))


def first_decrease(values):
    """Index of the first element smaller than its predecessor (None if non-decreasing)."""
    d = np.flatnonzero(np.diff(np.asarray(values, dtype=float)) < 0)
    return int(d[0]) + 1 if d.size else None


#: below this relative size a number is rounding noise of double precision (its digits
#: change with the BLAS and the machine), above its inverse a condition number means singular
PRECISION_FLOOR = 1e-12


def at_precision(x: float, unit: str = "") -> str:
    """``x`` with 2 digits, or "< 1e-12" / "> 1e+12" where its digits are rounding noise."""
    u = f" {unit}" if unit else ""
    if abs(x) < PRECISION_FLOOR:
        return f"< {PRECISION_FLOOR:.0e}{u} (rounding noise)"
    if abs(x) > 1 / PRECISION_FLOOR:
        return f"> {1 / PRECISION_FLOOR:.0e}{u} (numerically singular)"
    return f"{x:.1e}{u}"
