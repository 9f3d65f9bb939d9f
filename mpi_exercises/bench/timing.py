"""Timing loops of the collective benchmarks: calls interleaved round-robin, a tight loop of
calls after one barrier, the slowest rank's time; how many repetitions a size gets; and
Python's garbage collector paused while samples are taken.  Importing this module does not
start MPI."""

from __future__ import annotations

import gc
from contextlib import contextmanager

import numpy as np


@contextmanager
def collector_paused():
    """Python's garbage collector off inside the block (as :mod:`timeit` does), on again after
    it if it was on: a collection that fell inside a timed region would be timed as
    communication.  The objects a block of samples leaves are collected after it."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def capped_iterations(nbytes: int, iterations: int, budget_bytes: int, at_least: int) -> int:
    """Timed repetitions for one message size: ``iterations``, capped so that repetitions x
    ``nbytes`` stays within ``budget_bytes`` (large messages take fewer), but at least
    ``at_least`` (or ``iterations`` if that is smaller)."""
    return max(min(at_least, iterations), min(iterations, budget_bytes // max(nbytes, 1)))


def loop_method(inner: int, warm: bool = False) -> str:
    """The synchronised start of the collective benchmarks, in words (output and JSON)."""
    if inner <= 1:
        return ("one call after a barrier, slowest rank (includes the barrier's exit skew)"
                + ("; the same call made once, untimed, before the barrier (its buffers warm in the cache)"
                   if warm else ""))
    return (f"tight loop of {inner} calls after one barrier, time / {inner}, slowest rank "
            f"(the barrier's exit skew is charged once per {inner} calls)")


def time_interleaved(comm, calls: list, iters: int, warmup: int, *, inner: int = 1,
                     warm: bool = False) -> np.ndarray:
    """Per-call times (s), shape (len(calls), iters): round-robin over ``calls``, so every
    variant sees the same machine conditions (other processes, frequency changes).  A
    sample is a barrier, then ``inner`` back-to-back calls, their time divided by
    ``inner``: the barrier's exit skew (ranks leave it at different times) is charged once
    per ``inner`` calls instead of to every call (``inner=1``: one call per barrier, the
    skew included; :func:`loop_method` says it in words).  ``warm``: each sample's call is
    made once, untimed, before its barrier, so that it finds its buffers in the cache as a
    benchmark timing one call again and again does, not where the other calls' left them
    (``benchmarks/cache_state.py`` measures the difference).
    A sample's time is the slowest rank's.  The garbage collector is paused meanwhile
    (:func:`collector_paused`)."""
    from mpi4py import MPI

    samples = np.empty((len(calls), iters))
    with collector_paused():
        for i in range(-warmup, iters):
            for k, fn in enumerate(calls):
                if warm:
                    fn()
                comm.Barrier()
                t0 = MPI.Wtime()
                for _ in range(inner):
                    fn()
                if i >= 0:
                    samples[k, i] = (MPI.Wtime() - t0) / inner
    comm.Allreduce(MPI.IN_PLACE, samples, op=MPI.MAX)
    return samples


#: calls per sample of the collective benchmarks (see :func:`time_interleaved`)
DEFAULT_INNER = 10
