"""numpy and MPI, the one translation: a numpy dtype's predefined MPI datatype and an MPI
reduction's numpy ufunc (the executor combines blocks with it)."""

from __future__ import annotations

import numpy as np


def ufunc_of(op):
    """The numpy ufunc that computes MPI reduction ``op`` (SUM, PROD, MAX, MIN)."""
    from mpi4py import MPI

    for mpi_op, ufunc in ((MPI.SUM, np.add), (MPI.PROD, np.multiply),
                          (MPI.MAX, np.maximum), (MPI.MIN, np.minimum)):
        if op == mpi_op:
            return ufunc
    raise ValueError(f"op must be one of MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN; got {op!r}")


def mpi_datatype(dtype):
    """The predefined MPI datatype of a numeric numpy ``dtype`` (ValueError if there is none)."""
    from mpi4py.util.dtlib import from_numpy_dtype

    dtype = np.dtype(dtype)
    if dtype.kind not in "iufc":
        raise ValueError(f"dtype must be a numeric numpy dtype (integer, float or complex), got {dtype}")
    if not dtype.isnative:
        order = {">": "big-endian", "<": "little-endian"}[dtype.byteorder]
        raise ValueError(f"dtype {dtype} is {order}, but this machine and MPI are "
                         f"{'little' if np.little_endian else 'big'}-endian: convert first, "
                         f"e.g. x.astype(x.dtype.newbyteorder('='))")
    try:
        return from_numpy_dtype(dtype)
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"dtype {dtype} has no MPI datatype in this MPI library") from None
