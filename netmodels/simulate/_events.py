"""The compiled event loop of the *loggopsim* semantics (rules: :mod:`.arrival`).

Time is int64 ticks.  Every array is indexed by message (in step and column order), by
rank, or by *phase*: a rank's part in one step (its sends of the step, in column order,
then its receives).  The event queue is a 4-ary heap in one int64 array, three words per entry
(time, age, payload ``index << 3 | kind``: a message, or a rank for its receives and its token).
A phase's receives are posted at one time with consecutive ages, and one entry stands for them:
handling it posts the next receive, and the entry, while receives are left, takes the age of
the one after: the order of one entry per receive, with at most one such entry per rank in the
heap instead of every posted receive.  A rank's messages that wait for its CPU or receive gap
are a pairing heap by age (nodes in a shared pool), stood for in the event heap by one token
at the age of the oldest.

Asked for a trace, the loop also fills ``rec`` (:data:`REC_ROWS` rows of int64 ticks, one column
per message): when each message's send started (``REC_SEND``), from when its CPU was free
and the send ready (``REC_SEND_READY``: a gap held it from there), when its receiver took its
first byte (``REC_TAKEN``), from when the receiver's CPU was free and the byte there
(``REC_TAKE_READY``), when its receive was posted if its message had been taken before
(``REC_POSTED``, else -1), and whether it was (``REC_UNEXPECTED``, 1 or 0).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time

import numpy as np
from numba import njit

SEND, RECV, MSG, WAKE = 1, 2, 4, 5      # LogGOPSim's order of operation types


@njit(cache=True)
def layout(nprocs, src, dst):
    """``(sbeg, sorder, rbeg, rorder)``: rank h's sends are ``sorder[sbeg[h]:sbeg[h + 1]]``
    and its receives ``rorder[rbeg[h]:rbeg[h + 1]]`` (message indices in step and column
    order)."""
    n = src.size
    sbeg = np.zeros(nprocs + 1, np.int64)
    rbeg = np.zeros(nprocs + 1, np.int64)
    for i in range(n):
        sbeg[src[i] + 1] += 1
        rbeg[dst[i] + 1] += 1
    for h in range(nprocs):
        sbeg[h + 1] += sbeg[h]
        rbeg[h + 1] += rbeg[h]
    sorder = np.empty(n, np.int32)
    rorder = np.empty(n, np.int32)
    sfill, rfill = sbeg[:nprocs].copy(), rbeg[:nprocs].copy()
    for i in range(n):
        s, d = src[i], dst[i]
        sorder[sfill[s]] = i
        sfill[s] += 1
        rorder[rfill[d]] = i
        rfill[d] += 1
    return sbeg, sorder, rbeg, rorder


@njit(cache=True)
def groups(nprocs, src, step, rbeg, rorder):
    """Per message, the matching key of its receive as a message index: the first message
    of the same step from the same sender to the same receiver (a receive matches by
    sender and step).  Empty if every key has one message (the key is the message)."""
    grp = np.empty(src.size, np.int32)
    seen = np.full(nprocs, -1, np.int64)     # the last phase in which a sender was met
    first = np.empty(nprocs, np.int32)       # its first message in that phase
    q, shared = 0, False
    for h in range(nprocs):
        t = -1
        for x in range(rbeg[h], rbeg[h + 1]):
            i = rorder[x]
            if step[i] != t:
                t = step[i]
                q += 1
            s = src[i]
            if seen[s] != q:
                seen[s] = q
                first[s] = i
            else:
                shared = True
            grp[i] = first[s]
    if not shared:
        return np.empty(0, np.int32)
    return grp


@njit(cache=True)
def _push(heap, n, t, s, p):
    """Put (t, s, p) on ``heap`` holding ``n`` entries (room checked by the caller): ``n + 1``."""
    i = n
    while i > 0:
        up = (i - 1) >> 2
        ut, us = heap[3 * up], heap[3 * up + 1]
        if ut < t or (ut == t and us < s):
            break
        heap[3 * i], heap[3 * i + 1], heap[3 * i + 2] = ut, us, heap[3 * up + 2]
        i = up
    heap[3 * i], heap[3 * i + 1], heap[3 * i + 2] = t, s, p
    return n + 1


@njit(cache=True)
def _sift(heap, n, t, s, p):
    """Put (t, s, p) at the top of ``heap`` holding ``n`` entries (the old top is gone) and
    move it down to its place."""
    i = 0
    while True:
        c = 4 * i + 1
        if c >= n:
            break
        ct, cs = heap[3 * c], heap[3 * c + 1]
        for d in range(c + 1, min(c + 4, n)):
            dt, ds = heap[3 * d], heap[3 * d + 1]
            if dt < ct or (dt == ct and ds < cs):
                c, ct, cs = d, dt, ds
        if t < ct or (t == ct and s < cs):
            break
        heap[3 * i], heap[3 * i + 1], heap[3 * i + 2] = ct, cs, heap[3 * c + 2]
        i = c
    heap[3 * i], heap[3 * i + 1], heap[3 * i + 2] = t, s, p


@njit(cache=True)
def _pop(heap, n):
    """Drop the top of ``heap`` holding ``n`` entries (read it first): ``n - 1``."""
    n -= 1
    if n > 0:
        _sift(heap, n, heap[3 * n], heap[3 * n + 1], heap[3 * n + 2])
    return n


@njit(cache=True)
def _room(a, need):
    """``a``, or a copy twice as long along its last axis (at least ``need``) if it is shorter
    than ``need`` along it."""
    n = a.shape[-1]
    if need <= n:
        return a
    b = np.empty(a.shape[:-1] + (max(need, 2 * n),), a.dtype)
    b[..., :n] = a
    return b


@njit(cache=True)
def _link(a, b, key, child, sib):
    """The root of two pairing heaps (roots ``a``, ``b``): the older root, the other its first child."""
    if key[b] < key[a]:
        a, b = b, a
    sib[b] = child[a]
    child[a] = b
    return a


@njit(cache=True)
def _drop_root(r, key, child, sib, scratch):
    """The root of the pairing heap left when its root ``r`` is removed (two-pass pairing)."""
    k = 0
    c = child[r]
    while c >= 0:
        nxt = sib[c]
        sib[c] = -1
        scratch[k] = c
        k += 1
        c = nxt
    m = 0
    for j in range(0, k - 1, 2):
        scratch[m] = _link(scratch[j], scratch[j + 1], key, child, sib)
        m += 1
    if k % 2 == 1:
        scratch[m] = scratch[k - 1]
        m += 1
    if m == 0:
        return -1
    root = scratch[m - 1]
    for j in range(m - 2, -1, -1):
        root = _link(scratch[j], root, key, child, sib)
    return root


#: rows of the per-rank table of :func:`_run` (int64, one column per rank)
(NEXTO, NEXTGS, NEXTGR, SCUR, RCUR, REND, RNEXT, CSTEP, MATCHED, TOK_T, TOK_S, HEAD, PENDING, POSTED,
 TOKEN) = range(15)
#: words of the loop's state between calls of :func:`_run` (DONE: the events of the last call)
HN, TS, START, FREE, USED, DONE = range(6)
#: rows of a trace's record (see the module docstring)
REC_SEND, REC_SEND_READY, REC_TAKEN, REC_TAKE_READY, REC_POSTED, REC_UNEXPECTED = range(6)
REC_ROWS = 6
#: heap entries one event may add: its own, then its rank's next send and its receives, or
#: those of its rank's next phase (3), and one to spare
ROOM = 4


@njit(cache=True)
def _complete(h, now, nexto, nextgs, scur, pending):
    """Rank h's rendezvous send is matched at ``now``: it is complete, and h's CPU and send
    gap are free no earlier than ``now`` (LogGOPSim's rule).  Returns h."""
    nexto[h] = max(nexto[h], now)
    nextgs[h] = max(nextgs[h], now)
    scur[h] += 1
    pending[h] = 0
    return h


@njit(cache=True)
def prepare(nprocs, src, dst, step, entry):
    """The loop's arrays before its first event: ``(sbeg, sorder, rbeg, rorder, grp, ranks,
    balance, pool, scratch, heap, state)``, the arguments of :func:`_run` after
    ``recv_first`` (``entry``: per rank, ticks)."""
    sbeg, sorder, rbeg, rorder = layout(nprocs, src, dst)
    grp = groups(nprocs, src, step, rbeg, rorder)
    ranks = np.zeros((15, nprocs), np.int64)
    ranks[NEXTO] = ranks[NEXTGS] = ranks[NEXTGR] = entry
    ranks[SCUR] = sbeg[:nprocs]             # rank h's next send (position in sorder)
    ranks[RCUR] = rbeg[:nprocs]             # the first receive of its phase (position in rorder)
    ranks[REND] = rbeg[:nprocs]             # the end of its phase's receives
    ranks[RNEXT] = rbeg[:nprocs]            # the next of them to post (while its entry is in the heap)
    ranks[CSTEP] = -1                       # the step of its phase, -1 between phases
    ranks[HEAD] = -1                        # its waiting messages: a pairing heap by age
    balance = np.zeros(src.size, np.int32)  # per matching key: messages handled - receives posted, unmatched
    pool = np.empty((4, 64), np.int64)      # nodes of the pairing heaps: age, message, first child, next sibling
    scratch = np.empty(64, np.int64)
    heap = np.empty(3 * max(64, 2 * nprocs), np.int64)
    state = np.zeros(6, np.int64)
    state[FREE] = -1
    return sbeg, sorder, rbeg, rorder, grp, ranks, balance, pool, scratch, heap, state


#: events of the first call of :func:`_run` (later calls: as many as take about :data:`CHUNK_S`)
FIRST_CHUNK = 2**14
#: wall time of one call of :func:`_run`, s: between calls Python runs its signal handlers
#: (Ctrl-C), which it cannot while the compiled loop holds the thread
CHUNK_S = 0.05


@contextlib.contextmanager
def _ctrl_c_held():
    """A Ctrl-C while compiled code makes the arrays it returns is noted and raised once the
    call has returned: numba's conversion of a returned array does not survive a
    KeyboardInterrupt raised inside it (numpy checks for signals there), and the process died
    of a segmentation fault instead (1 Ctrl-C in 5 at 2^20 ranks, during :func:`prepare`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)      # to the handler it was meant for


def simulate(nprocs, src, dst, step, row, table, extra, entry, recv_first, rec=None):
    """Per rank, the tick its CPU is last free.  ``table[row[i]]``: message i's send busy,
    send gap, first byte after the send busy, receive hold and receive gap (ticks), and 1 if
    it goes by rendezvous (complete when matched, not when started) else 0;
    ``extra``: per message its extra latency (ticks) or empty; ``entry``: per rank (ticks).
    A rank's *phase* is its part in one step: its sends of the step, then its receives.
    ``rec``: None, or an int64 array (:data:`REC_ROWS`, messages) filled with the trace's times
    (see the module docstring; the caller sets it to -1).

    The event loop (:func:`_run`) runs about :data:`CHUNK_S` of events per call and stops
    early where an array it fills is full; between calls the arrays are grown and Python
    handles its signals (a Ctrl-C ends the run within a chunk).  In the loop no array is
    ever replaced, which lets numba drop the reference counting of every array at every
    event (16 % of the loop's time)."""
    with _ctrl_c_held():
        sbeg, sorder, rbeg, rorder, grp, ranks, balance, pool, scratch, heap, state = prepare(nprocs, src, dst,
                                                                                              step, entry)
    chunk = FIRST_CHUNK
    if rec is None:
        rec = np.empty((REC_ROWS, 0), np.int64)
    while True:
        t0 = time.perf_counter()
        more = _run(nprocs, src, dst, step, row, table, extra, recv_first, sbeg, sorder, rbeg, rorder, grp,
                    ranks, balance, pool, scratch, heap, state, chunk, rec)
        if not more:
            if np.any(ranks[SCUR] < sbeg[1:]) or np.any(ranks[RCUR] < rbeg[1:]):
                raise ValueError("deadlock: a rendezvous send waits for a receive that is posted only after "
                                 "a send that cannot complete (post the receives first: --receives with-sends on the "
                                 "command line, receives='with-sends' in Python; or raise S above the message sizes)")
            return ranks[NEXTO].copy()
        took = time.perf_counter() - t0
        if state[DONE] >= chunk:         # a whole chunk: the next one sized to take about CHUNK_S
            chunk = int(min(max(chunk * CHUNK_S / max(took, 1e-6), 1024), 2 * chunk, 2**40))
        with _ctrl_c_held():
            if 3 * (state[HN] + ROOM) > heap.size:
                heap = _room(heap, 3 * (state[HN] + ROOM))
            if state[USED] == pool.shape[1]:
                pool = _room(pool, state[USED] + 1)
                scratch = _room(scratch, pool.shape[1])


@njit(cache=True)
def _run(nprocs, src, dst, step, row, table, extra, recv_first, sbeg, sorder, rbeg, rorder, grp,
         ranks, balance, pool, scratch, heap, state, limit, rec):
    """At most ``limit`` events of :func:`simulate` from ``state`` on: False when every
    event is handled, True (``state`` saved) after ``limit`` events or when ``heap`` lacks
    room for one more event's entries or ``pool`` for one more node.  ``rec``: the trace's
    record, or empty (no trace)."""
    shared = grp.size > 0
    tracing = rec.shape[1] > 0
    nexto, nextgs, nextgr = ranks[NEXTO], ranks[NEXTGS], ranks[NEXTGR]
    scur, rcur, rend, rnext = ranks[SCUR], ranks[RCUR], ranks[REND], ranks[RNEXT]
    cstep, matched, tok_t, tok_s, head = ranks[CSTEP], ranks[MATCHED], ranks[TOK_T], ranks[TOK_S], ranks[HEAD]
    pending, posted, token = ranks[PENDING], ranks[POSTED], ranks[TOKEN]   # 1 or 0
    bl_s, bl_i, bl_child, bl_sib = pool[0], pool[1], pool[2], pool[3]
    hn, ts, start, free, used = state[HN], state[TS], state[START], state[FREE], state[USED]
    noisy = extra.size > 0
    done = 0
    while start < nprocs or hn > 0:
        if 3 * (hn + ROOM) > heap.size or (free < 0 and used == bl_s.size) or done == limit:
            break                               # the driver makes room (or handles signals), then calls again
        done += 1
        adv = -1
        adv2 = -1                               # a rendezvous sender the event releases too
        if start < nprocs:
            adv = start
            now = nexto[adv]
            start += 1
        else:
            time, order, pay = heap[0], heap[1], heap[2]
            now = time
            kind, x = pay & 7, pay >> 3
            if kind == RECV and rnext[x] + 1 < rend[x]:
                _sift(heap, hn, time, order + 1, pay)   # the rank's next receive takes its place
            else:
                hn = _pop(heap, hn)
            if kind == SEND:
                i = x
                h = src[i]
                busy = max(nexto[h], nextgs[h])
                if busy > time:
                    hn = _push(heap, hn, busy, order, pay)
                    continue
                r = row[i]
                if tracing:
                    rec[REC_SEND, i] = time
                    rec[REC_SEND_READY, i] = max(rec[REC_SEND_READY, i], nexto[h])
                nexto[h] = time + table[r, 0]
                nextgs[h] = time + table[r, 1]
                arrive = time + table[r, 0] + table[r, 2]
                if noisy:
                    arrive += extra[i]
                hn = _push(heap, hn, arrive, ts, (i << 3) | MSG)
                ts += 1
                if table[r, 5] == 0:            # eager: complete when it starts
                    scur[h] += 1
                    pending[h] = 0
                    adv = h
            elif kind == RECV:
                h = x
                i = rorder[rnext[h]]
                rnext[h] += 1
                g = grp[i] if shared else i
                if balance[g] > 0:
                    matched[h] += 1
                    adv = h
                    if tracing:
                        rec[REC_POSTED, i] = time
                    if table[row[i], 5]:
                        adv2 = _complete(src[i], time, nexto, nextgs, scur, pending)
                balance[g] -= 1
            else:                               # a message, or the token of rank x's oldest waiting one
                if kind == WAKE:
                    h = x
                    if not token[h] or tok_t[h] != time or tok_s[h] != order:
                        continue                # superseded by a later token
                    i = bl_i[head[h]]
                else:
                    i = x
                    h = dst[i]
                busy = max(nexto[h], nextgr[h])
                if busy > time:
                    if kind == MSG:             # it waits, in the pairing heap by age
                        if free >= 0:
                            node, free = free, bl_sib[free]
                        else:
                            node, used = used, used + 1
                        bl_s[node], bl_i[node], bl_child[node], bl_sib[node] = order, i, -1, -1
                        head[h] = node if head[h] < 0 else _link(head[h], node, bl_s, bl_child, bl_sib)
                        if token[h] and tok_s[h] < order:
                            continue            # an older message waits already
                    token[h], tok_t[h], tok_s[h] = 1, busy, order
                    hn = _push(heap, hn, busy, order, (np.int64(h) << 3) | WAKE)
                    continue
                if kind == WAKE:                # the oldest waiting message is handled
                    node = head[h]
                    head[h] = _drop_root(node, bl_s, bl_child, bl_sib, scratch)
                    bl_sib[node], free = free, node
                    token[h] = 0
                r = row[i]
                if tracing:
                    first = rec[REC_SEND, i] + table[r, 0] + table[r, 2]
                    if noisy:
                        first += extra[i]
                    rec[REC_TAKEN, i] = time
                    rec[REC_TAKE_READY, i] = max(first, nexto[h])
                    g = grp[i] if shared else i
                    rec[REC_UNEXPECTED, i] = 1 if balance[g] >= 0 else 0
                nexto[h] = time + table[r, 3]
                nextgr[h] = time + table[r, 4]
                if head[h] >= 0:                # the others wait for the CPU and gap again
                    token[h], tok_t[h], tok_s[h] = 1, max(nexto[h], nextgr[h]), bl_s[head[h]]
                    hn = _push(heap, hn, tok_t[h], tok_s[h], (np.int64(h) << 3) | WAKE)
                g = grp[i] if shared else i
                if balance[g] < 0:
                    matched[h] += 1
                    adv = h
                    if table[r, 5]:
                        adv2 = _complete(src[i], time, nexto, nextgs, scur, pending)
                balance[g] += 1
        # release what rank adv (and adv2, lower rank first, as LogGOPSim) may do next: its
        # next send (one at a time), its phase's receives (after its last send, or with its
        # first if recv_first), and the next phase once every send is complete (eager: started;
        # rendezvous: matched) and every receive is matched
        if adv2 >= 0 and (adv < 0 or adv2 < adv):
            adv, adv2 = adv2, adv
        if adv2 == adv:
            adv2 = -1
        while adv >= 0:
            h = adv
            if cstep[h] < 0:                    # enter its next phase, if any
                t = -1
                if scur[h] < sbeg[h + 1]:
                    t = step[sorder[scur[h]]]
                if rcur[h] < rbeg[h + 1] and (t < 0 or step[rorder[rcur[h]]] < t):
                    t = step[rorder[rcur[h]]]
                if t < 0:
                    adv, adv2 = adv2, -1        # nothing left: the other rank, if any
                    continue
                cstep[h] = t
                e = rcur[h]
                while e < rbeg[h + 1] and step[rorder[e]] == t:
                    e += 1
                rend[h] = e
            sending = scur[h] < sbeg[h + 1] and step[sorder[scur[h]]] == cstep[h]
            nr = rend[h] - rcur[h]
            if sending and not pending[h]:
                if tracing:
                    rec[REC_SEND_READY, sorder[scur[h]]] = max(now, nexto[h])
                hn = _push(heap, hn, max(nexto[h], nextgs[h]), ts, (np.int64(sorder[scur[h]]) << 3) | SEND)
                ts += 1
                pending[h] = 1
            if not posted[h] and nr > 0 and (recv_first or not sending):
                posted[h] = 1
                rnext[h] = rcur[h]              # its receives are posted one by one, ages ts, ts + 1, ...:
                hn = _push(heap, hn, nexto[h], ts, (np.int64(h) << 3) | RECV)   # one entry stands for them
                ts += nr
            if sending or matched[h] < nr:
                adv, adv2 = adv2, -1
                continue
            rcur[h] = rend[h]                   # the phase is complete
            matched[h] = 0
            posted[h] = pending[h] = 0
            cstep[h] = -1
    state[HN], state[TS], state[START], state[FREE], state[USED], state[DONE] = hn, ts, start, free, used, done
    return start < nprocs or hn > 0
