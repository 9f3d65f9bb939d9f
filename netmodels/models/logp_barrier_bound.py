"""A lower bound on any barrier under LogP: a rank leaves only once it knows of all P entries,
and knowledge spreads no faster than an optimal broadcast (Karp et al.).  Times in s."""

from __future__ import annotations

import math

from ..algorithms.barriers import ceil_log
from .logp_barriers import check_params


def knowledge_bound(params) -> float:
    """Lower bound (s) on any barrier of ``params.P`` ranks under LogP.

    A rank can leave only once its knowledge covers all P entries.  Knowledge grows at
    most like an optimal broadcast run backwards (Karp et al., optimal broadcast in
    LogP): a rank takes in one message every ``f = max(o_r, g)`` and each message brings
    at most what its sender knew ``o_s + L + o_r`` earlier, so the number N(t) of entries
    one rank can know at time t obeys N(t) <= N(t - f) + N(t - (o_s + L + o_r)), N = 1
    before the first message.  Returns the first t with N(t) >= P.
    """
    check_params(params)
    P = params.P
    if P == 1:
        return 0.0
    f, w = params.f_r, params.one_way
    # Optimal broadcast: a rank that sends at a*f + b*w (a sends after b hops) informs a
    # new rank at a*f + (b+1)*w; counting lattice paths, C(a+b, a) ranks are informed then,
    # and by the hockey-stick identity N(T) = 1 + sum_b C(A_b + b + 1, b + 1) with
    # A_b = floor((T - (b+1) w) / f).  N is a step function: bisect, then snap to the event.
    def informed(T):
        total, b = 1, 0
        while (b + 1) * w <= T * (1 + 1e-12):
            A = math.floor((T - (b + 1) * w) / f * (1 + 1e-12) + 1e-9) if f > 0 else P
            total += math.comb(A + b + 1, b + 1)
            if total >= P:
                return total
            b += 1
        return total

    lo, hi = 0.0, ceil_log(2, P) * (w + f)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if informed(mid) >= P else (mid, hi)
        if hi - lo <= 1e-13 * hi:
            break
    # the event time at hi: the largest (b+1) w + a f not above hi
    best = 0.0
    b = 0
    while (b + 1) * w <= hi * (1 + 1e-12):
        a = math.floor((hi - (b + 1) * w) / f * (1 + 1e-12) + 1e-9) if f > 0 else 0
        best = max(best, (b + 1) * w + a * f)
        b += 1
    return best

