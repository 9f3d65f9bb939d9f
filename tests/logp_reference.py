"""Reference for the tests: the LogP family's rules run message by message, in plain Python.

An independent implementation of the rules of :class:`netmodels.models.logp.LogPClock`
(the one the simulator asks), written per transfer with no numpy step columns, as the
rules were first written: the simulator under *stepwise* must give the same exit times.
Small P only.
"""

from __future__ import annotations

import math

import numpy as np

from netmodels._check import positive
from netmodels.algorithms.arrays import as_transfers
from netmodels.models.logp import LogP


def simulate(schedule, params: LogP, entry=None, *, elem_bytes: int = 0,
             combine_s_per_elem: float = 0.0) -> np.ndarray:
    """Exit time (s) of every rank when ``schedule`` runs on the LogP machine ``params``.

    Rules (one processor, one step): the rank starts the step when it has finished the
    previous one; it sends its messages of the step in order, each send starting at
    least ``g`` after its previous send and keeping the CPU busy ``o_s``; a message
    arrives ``o_s + L`` after its send started; then the rank receives the step's
    messages in order of arrival, each receive starting no earlier than the arrival, the
    end of the previous CPU activity, and ``g`` after the previous receive, and keeping
    the CPU busy ``o_r``.  ``entry`` (s, one per rank) delays each rank's start; default 0.
    ``params.P`` is not used: the schedule says how many ranks there are.  ``schedule``
    may be in either form (one Python step per transfer: small P;
    :func:`netmodels.simulate.simulate` is the vectorised twin).

    LogGP (``params`` a :class:`LogGP` and ``elem_bytes`` > 0, the bytes of one vector
    element): a message of m = count x elem_bytes bytes arrives ``(m - 1) G`` later, and the
    sender's next message starts no earlier than ``g + (m - 1) G`` after it (the interface
    is busy with its bytes); at the receiver its bytes after the first take ``(m - 1) G``
    after the CPU and the receive gap let its first byte in.  ``combine_s_per_elem`` (s per element, e.g. a measured c2)
    keeps the receiver's CPU busy ``count x combine_s_per_elem`` more after a combining
    receive.  Both default to 0: plain LogP.
    """
    schedule = as_transfers(schedule)
    p = schedule.nprocs
    ready = np.zeros(p) if entry is None else np.array(entry, dtype=float)
    if ready.shape != (p,) or np.any(~np.isfinite(ready)):
        raise ValueError(f"entry must hold {p} finite times")
    if isinstance(elem_bytes, bool) or not isinstance(elem_bytes, (int, np.integer)) or elem_bytes < 0:
        raise ValueError(f"elem_bytes must be an integer >= 0, got {elem_bytes!r}")
    combine = positive("combine_s_per_elem", combine_s_per_elem, allow_zero=True)
    G = getattr(params, "G", 0.0) if elem_bytes else 0.0
    os_, or_, L, g = params.o_s, params.o_r, params.L, params.g
    last_send = np.full(p, -math.inf)     # earliest start of the next send
    last_recv = np.full(p, -math.inf)
    for step in schedule.steps:
        cpu = ready.copy()
        inbox: dict[int, list] = {}
        for order, tr in enumerate(step):
            wire = max(tr.count * elem_bytes - 1, 0) * G
            start = max(cpu[tr.src], last_send[tr.src])
            last_send[tr.src] = start + g + wire
            cpu[tr.src] = start + os_
            inbox.setdefault(tr.dst, []).append((start + os_ + L + wire, order, tr))
        for dst, msgs in inbox.items():
            for arrival, _, tr in sorted(msgs, key=lambda m: m[:2]):
                # the bytes after the first occupy the receiver (m - 1) G from its first byte
                wire = max(tr.count * elem_bytes - 1, 0) * G
                start = max(cpu[dst] + wire, arrival, last_recv[dst] + g + wire)
                last_recv[dst] = start
                cpu[dst] = start + or_ + (tr.count * combine if tr.combine else 0.0)
        ready = cpu
    return ready
