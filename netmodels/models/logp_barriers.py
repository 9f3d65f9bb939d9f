"""Barrier times under LogP in closed form: the formulas the chapter "The LogP family and
barriers" derives, one per algorithm of :mod:`netmodels.algorithms.barriers`.

They are independent oracles: the tests check them against the simulator
(:func:`netmodels.simulate.simulate`), which prices the same schedules by the model's step rule
(:class:`netmodels.models.logp.LogPClock`).  Times in s.
"""

from __future__ import annotations

from .._check import positive_int
from ..algorithms.barriers import ceil_log
from ..algorithms.registry import check_options
from .logp import LogP

#: the barrier algorithms :func:`barrier_time` knows (those of :mod:`netmodels.algorithms.barriers`)
ALGORITHMS = ("central_counter", "combining_tree", "tournament", "binomial", "dissemination",
              "nway_dissemination", "butterfly", "pairwise_exchange")


def check_params(params) -> LogP:
    """``params`` itself if it is a LogP machine (any of the family), else ValueError."""
    if not isinstance(params, LogP):
        raise ValueError(f"params must be a netmodels.models.logp.LogP, got {type(params).__name__}")
    return params


def barrier_time(algorithm: str, params: LogP, **options) -> float:
    """Predicted time (s) of a barrier on ``params.P`` ranks entering together.

    ``algorithm`` is one of :data:`ALGORITHMS`; options: ``fan_in`` (combining_tree,
    default 4), ``n`` (nway_dissemination, default 2).  The closed forms are derived in
    the chapter "The LogP family and barriers" (there with ``o_s = o_r``; here general,
    with any gap).  They equal the simulator's time (:func:`netmodels.simulate.simulate`) of the schedule of :mod:`netmodels.algorithms.barriers` when the schedule is
    regular: any P for central counter and dissemination, a full tree for the combining
    tree (P = (k^(D+1) - 1)/(k - 1)), P a power of n + 1 for n-way dissemination, a power
    of two for the others.  For other P they are upper bounds (the tests check both).
    """
    check_params(params)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}, got {algorithm!r}")
    check_options(algorithm, options, _OPTIONS)
    return _FORMULAS[algorithm](params, params.P, **options)


def _central_counter(m: LogP, P: int) -> float:
    if P == 1:
        return 0.0
    return 2 * m.one_way + (P - 2) * (m.f_r + m.f_s)


def _tree_depth(P: int, k: int) -> int:
    """Depth of the heap-ordered k-ary tree on P nodes (the depth of node P - 1)."""
    depth, first, width = 0, 0, 1          # level d holds nodes first .. first + width - 1
    while first + width < P:
        first, width, depth = first + width, width * k, depth + 1
    return depth


def _combining_tree(m: LogP, P: int, fan_in: int = 4) -> float:
    k = positive_int("fan_in", fan_in, minimum=2)
    return _tree_depth(P, k) * (2 * m.one_way + (k - 1) * (m.f_r + m.f_s))


def _rounds(R: int, first: float, rest: float) -> float:
    """R rounds: the first is not held back by the gap of an earlier one."""
    return 0.0 if R == 0 else first + (R - 1) * rest


def _nway_round(m: LogP, n: int, first: bool = False) -> float:
    """One round of n-way dissemination: send n messages (one per f_s), then receive n (one
    per f_r, none before it arrives); a later round also waits a gap after the previous one."""
    busy = (n - 1) * (m.f_s + m.f_r) + m.o_s + m.o_r          # the rank's own sends and receives
    last = (n - 1) * max(m.f_s, m.f_r) + max(m.one_way, 0.0 if first else m.g)   # the last arrival
    return max(busy, last)


def _nway_dissemination(m: LogP, P: int, n: int = 2) -> float:
    n = positive_int("n", n)
    return _rounds(ceil_log(n + 1, P), _nway_round(m, n, True), _nway_round(m, n))


def _dissemination(m: LogP, P: int) -> float:
    return _rounds(ceil_log(2, P), m.one_way, m.t_r)


def _binomial(m: LogP, P: int) -> float:
    # fan-in: one receive per round at the winners; fan-out: the same chain backwards
    return 2 * _dissemination(m, P)


def _butterfly(m: LogP, P: int) -> float:
    R = ceil_log(2, P)
    if P == 2**R:
        return _dissemination(m, P)
    # some ranks play two roles: two sends and two receives per round
    return _rounds(R, _nway_round(m, 2, True), _nway_round(m, 2))


def _pairwise_exchange(m: LogP, P: int) -> float:
    R = P.bit_length() - 1
    # not a power of two: one step to fold the extra ranks in, one to release them
    return _rounds(R if P & (P - 1) == 0 else R + 2, m.one_way, m.t_r)


#: the options the closed forms take (a tournament's release is always the tree's here)
_OPTIONS = {"combining_tree": ("fan_in",), "nway_dissemination": ("n",)}

_FORMULAS = {
    "central_counter": _central_counter,
    "combining_tree": _combining_tree,
    "tournament": _binomial,
    "binomial": _binomial,
    "dissemination": _dissemination,
    "nway_dissemination": _nway_dissemination,
    "butterfly": _butterfly,
    "pairwise_exchange": _pairwise_exchange,
}

