"""The check every front door call with ``out`` passes (:func:`check_out`), kept apart from
:mod:`._door` so that each stays small.  Importing this module does not start MPI.
"""

from __future__ import annotations

import numpy as np

#: the last (out, x) that :func:`check_out` found sharing no memory
_APART = (None, None)


def check_out(out, shape, dtype, x=None):
    """Raise ValueError unless ``out`` is a writeable C-contiguous array of ``shape`` and
    ``dtype`` that shares no memory with ``x`` (every call with ``out`` passes here: the
    common case is tested first, with as few attribute look-ups as possible)."""
    global _APART
    if type(out) is np.ndarray and out.shape == shape and (out.dtype is dtype or out.dtype == dtype):
        flags = out.flags
        if flags.c_contiguous and flags.writeable:
            # arrays that own their memory overlap only if they are the same array; the last
            # pair found apart stays apart (an array's memory never moves while it is alive,
            # and the pair is kept alive here)
            if x is None or (out is not x and ((out.base is None and x.base is None)
                                               or (out is _APART[0] and x is _APART[1]))):
                return
            if out is not x and not np.may_share_memory(out, x):
                _APART = (out, x)
                return
            raise ValueError("out must not share memory with x (x is never modified)")
    raise ValueError(f"out must be a writeable C-contiguous numpy array of shape {shape} and "
                     f"dtype {dtype}")
