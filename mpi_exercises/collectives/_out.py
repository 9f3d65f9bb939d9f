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


def facts(x, out) -> tuple:
    """What :meth:`FrontDoor.repeats` compares of ``x`` and ``out`` (each can change in place)."""
    if out is None:
        return x.dtype, x.shape, x.strides
    return x.dtype, x.shape, x.strides, out.dtype, out.shape, out.strides, out.flags.writeable
