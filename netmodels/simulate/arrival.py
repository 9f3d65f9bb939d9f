"""The *loggopsim* semantics: a message is handled when it arrives, LogGOPSim's rules.

LogGOPSim (Hoefler, Schneider & Lumsdaine, HPDC 2010) runs a GOAL schedule event by
event in global time order.  This module runs a kit schedule under the same rules, with
the dependencies that :func:`netmodels.simulate.loggopsim.to_goal` writes (a rank's
sends of step t in column order, each after the previous one; its receives of step t
posted after its last send of t; its first send of the next step it takes part in after
every receive of t is complete).  Per rank there is one CPU clock ``nexto`` and two NIC
clocks, ``nextgs`` (sends) and ``nextgr`` (receives), all starting at the rank's entry
time.  Events are taken in order of time, ties in order of creation:

* a **send** that is ready at t starts at ``t' = max(t, nexto, nextgs)``: the CPU is busy
  until ``t' + o_s``, the next send may start at ``t' + g + (m - 1) G``, and the message's
  first byte reaches the receiver at ``t' + o_s + L`` (plus the message's noise, if any).
  An eager send is complete when it starts: the rank's next operation is released at once;
* a **receive** is only *posted* (no CPU time): it matches a message already handled, or
  waits for one (matching by sender and step, first come first served);
* a **message** is handled at ``t = max(first byte, nexto, nextgr)``, whether or not its
  receive is posted, before or after the rank's own sends by the time they reach the
  CPU: the CPU is busy until ``t + o_r + (m - 1) G`` (the bytes after the first, then
  the overhead; plus ``combine`` per element), the next message may be handled at
  ``t + g + (m - 1) G``.

A rank finishes when its CPU is last free (``nexto``), as LogGOPSim reports it.  The
terms come from the model's :meth:`~netmodels.models.logp.LogP.message_terms` (LogP,
LogGP with a topology's link loads, PLogP), so the LogP family's one cost rule is used.

This is a discrete-event simulation with a heap (three events per message, a Python
loop): exact, but slower than the step semantics, which work on whole steps at once.
"""

from __future__ import annotations

import heapq

import numpy as np

_SEND, _RECV, _MSG, _WAKE = 1, 2, 4, 5    # (LogGOPSim's order of operation types when released together)


def _columns(steps, terms_of, extras):
    """Per message, in step and column order: src, dst, step, and the four times of the
    rules (s): send busy, send gap, first-byte transit after the send busy, receive hold
    (busy + wire) and receive gap (gap + wire)."""
    cols = {k: [] for k in ("src", "dst", "t", "sbusy", "sgap", "first", "hold", "rgap")}
    for t, (step, extra) in enumerate(zip(steps, extras)):
        if step is None or step.src.size == 0:
            continue
        terms = terms_of(step)
        n = step.src.size
        send_busy, send_gap, transit, recv_wire, recv_busy, recv_gap = terms
        full = lambda x: np.broadcast_to(np.asarray(x, dtype=float), (n,))  # noqa: E731
        first = full(transit) - full(recv_wire)
        if extra is not None:
            first = first + extra
        cols["src"].append(step.src)
        cols["dst"].append(step.dst)
        cols["t"].append(np.full(n, t, dtype=np.int64))
        cols["sbusy"].append(full(send_busy))
        cols["sgap"].append(full(send_gap))
        cols["first"].append(first)
        cols["hold"].append(full(recv_busy) + full(recv_wire))
        cols["rgap"].append(full(recv_gap) + full(recv_wire))
    return {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in cols.items()}


def run(nprocs: int, steps, terms_of, extras, entry: np.ndarray) -> np.ndarray:
    """Finish time (s) of every rank.  ``steps``: per step a
    :class:`~netmodels.models.step.Step` or None; ``terms_of(step)``: the model's message
    terms of a step (:meth:`~netmodels.models.logp.LogP.message_terms`); ``extras``: per
    step the messages' extra latency (s) or None; ``entry``: per rank its entry time (s)."""
    c = _columns(steps, terms_of, extras)
    n = c["src"].size
    src, dst, tstep = c["src"].tolist(), c["dst"].tolist(), c["t"].tolist()
    sbusy, sgap, first = c["sbusy"].tolist(), c["sgap"].tolist(), c["first"].tolist()
    hold, rgap = c["hold"].tolist(), c["rgap"].tolist()
    # per rank, its phases: (sends of a step in column order, receives of that step)
    bucket: dict = {}
    for i in range(n):
        bucket.setdefault((src[i], tstep[i]), ([], []))[0].append(i)
    for i in range(n):
        bucket.setdefault((dst[i], tstep[i]), ([], []))[1].append(i)
    phases = [[] for _ in range(nprocs)]
    for rank, t in sorted(bucket):
        phases[rank].append(bucket[(rank, t)])
    nexto = entry.astype(float).tolist()
    nextgs, nextgr = list(nexto), list(nexto)
    phase = [0] * nprocs               # the phase a rank is in
    sent = [0] * nprocs                # sends of the phase done
    matched = [0] * nprocs             # receives of the phase matched
    # matching key of a message and of its receive: (receiver, sender, step) as one integer
    key_of = ((c["dst"].astype(np.int64) * nprocs + c["src"].astype(np.int64)) * (max(tstep, default=0) + 1)
              + c["t"].astype(np.int64)).tolist() if n else []
    uq: dict = {}                      # key -> messages handled, not yet matched
    rq: dict = {}                      # key -> receives posted, not yet matched
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    ts = 0

    posted = [False] * nprocs          # the phase's receives are posted
    # messages that found the CPU or the receive gap busy wait in ``blocked[h]`` (by age);
    # one token per rank stands for them in the event heap, at the time the CPU and gap
    # are next free and at the age of the oldest: LogGOPSim re-queues every waiting
    # message each time, with the same outcome (only the oldest can be handled first)
    blocked = [[] for _ in range(nprocs)]
    token: list = [None] * nprocs

    def advance(h: int):
        """Release what rank h may do next after one of its operations completed."""
        nonlocal ts
        while phase[h] < len(phases[h]):
            sends, recvs = phases[h][phase[h]]
            if sent[h] < len(sends):
                push(heap, (max(nexto[h], nextgs[h]), ts, _SEND, h, sends[sent[h]]))
                ts += 1
                return
            if recvs and not posted[h]:
                posted[h] = True
                t0 = nexto[h]
                for i in recvs:
                    push(heap, (t0, ts, _RECV, h, i))
                    ts += 1
                return
            if matched[h] < len(recvs):
                return
            phase[h] += 1
            sent[h] = matched[h] = 0
            posted[h] = False

    for h in range(nprocs):
        advance(h)
    while heap:
        time, order, kind, h, i = pop(heap)
        if kind == _SEND:
            busy = nexto[h] if nexto[h] > nextgs[h] else nextgs[h]
            if busy > time:
                push(heap, (busy, order, kind, h, i))
                continue
            nexto[h] = time + sbusy[i]
            nextgs[h] = time + sgap[i]
            push(heap, (time + sbusy[i] + first[i], ts, _MSG, dst[i], i))
            ts += 1
            sent[h] += 1
            advance(h)
        elif kind == _MSG or kind == _WAKE:
            if kind == _WAKE:                   # the oldest waiting message of rank h retries
                if token[h] != (time, order):
                    continue                    # superseded by a later token
                i = blocked[h][0][1]
            busy = nexto[h] if nexto[h] > nextgr[h] else nextgr[h]
            if busy > time:
                if kind == _MSG:
                    heapq.heappush(blocked[h], (order, i))
                    if token[h] is not None and token[h][1] < order:
                        continue                # an older message waits already
                token[h] = (busy, order)
                push(heap, (busy, order, _WAKE, h, -1))
                continue
            if kind == _WAKE:
                heapq.heappop(blocked[h])
                token[h] = None
            nexto[h] = time + hold[i]
            nextgr[h] = time + rgap[i]
            if blocked[h]:                      # the others wait for the CPU and gap again
                nxt = (nexto[h] if nexto[h] > nextgr[h] else nextgr[h], blocked[h][0][0])
                token[h] = nxt
                push(heap, (nxt[0], nxt[1], _WAKE, h, -1))
            key = key_of[i]
            waiting = rq.get(key, 0)
            if waiting:
                rq[key] = waiting - 1
                matched[h] += 1
                advance(h)
            else:
                uq[key] = uq.get(key, 0) + 1
        else:                                   # a receive is posted
            key = key_of[i]
            handled = uq.get(key, 0)
            if handled:
                uq[key] = handled - 1
                matched[h] += 1
                advance(h)
            else:
                rq[key] = rq.get(key, 0) + 1
    return np.array(nexto)
