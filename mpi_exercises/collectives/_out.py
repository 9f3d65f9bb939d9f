"""The check every front door call with ``out`` passes (:func:`check_out`), kept apart from
:mod:`._door` so that each stays small.  Importing this module does not start MPI.
"""

from __future__ import annotations

import numpy as np

#: the last (out, x, x's shape, strides and dtype) that :func:`check_out` found sharing no memory
_APART = (None, None, None)


def check_out(out, shape, dtype, x=None):
    """Raise ValueError unless ``out`` is a writeable C-contiguous array of ``shape`` and
    ``dtype`` that shares no memory with ``x`` (every call with ``out`` passes here: the
    common case is tested first, with as few attribute look-ups as possible)."""
    global _APART
    if type(out) is np.ndarray and out.shape == shape and (out.dtype is dtype or out.dtype == dtype):
        flags = out.flags
        if flags.c_contiguous and flags.writeable:
            # arrays that own their memory overlap only if they are the same array; the last
            # pair found apart stays apart while x's extent is the same (an array's memory never
            # moves while it is alive, the pair is kept alive here, out's extent is checked above;
            # x's shape, strides and dtype can be changed in place, e.g. strides onto out)
            if x is None or (out is not x and ((out.base is None and x.base is None)
                                               or (out is _APART[0] and x is _APART[1]
                                                   and (x.shape, x.strides, x.dtype) == _APART[2]))):
                return
            if out is not x and not np.may_share_memory(out, x):
                _APART = (out, x, (x.shape, x.strides, x.dtype))
                return
            raise ValueError("out must not share memory with x (x is never modified)")
    raise ValueError(f"out must be a writeable C-contiguous numpy array of shape {shape} and "
                     f"dtype {dtype}")


#: the bits of ``ndarray.flags.num`` (all flags in one int) of a C-contiguous (0x1), writeable
#: (0x400) array: what a repeated call requires of out (and of x, C-contiguous)
WRITABLE_C = 0x0001 | 0x0400


class Repeat:
    """A call accepted (by :meth:`FrontDoor.enter <._door.FrontDoor.enter>`) that a later call
    may repeat (:meth:`FrontDoor.again <._door.FrontDoor.again>`): its comm and state, ``x``,
    ``out``, the caller's other arguments ``args``, its plan and executor, the door's ``prime``
    and whether the first step travels inside the agreement (``inline``); and what was checked
    of x and out that can change in place: dtype objects, shapes, flags (``flags.num``).
    A later call with the same ``x`` and ``out`` objects repeats it if these are unchanged and
    both are C-contiguous and out writeable: their extents are then those checked (apart, and
    out's where the executor writes), as out's memory cannot move (the executor pins it) and x's
    can move only to memory of its own (numpy's resize)."""

    __slots__ = ("comm", "state", "x", "out", "args", "plan", "ex", "prime", "inline", "xdtype", "xshape",
                 "xflags", "odtype", "oshape", "oflags")

    def __init__(self, comm, state, x, out, args, plan, ex, prime, inline):
        self.comm, self.state, self.x, self.out, self.args = comm, state, x, out, args
        self.plan, self.ex, self.prime, self.inline = plan, ex, prime, inline
        self.xdtype, self.xshape, self.xflags = x.dtype, x.shape, x.flags.num
        self.odtype, self.oshape, self.oflags = out.dtype, out.shape, out.flags.num
        if not (self.xflags & 1 and self.oflags & WRITABLE_C == WRITABLE_C):
            self.xdtype = None                  # never repeated: every call checked
