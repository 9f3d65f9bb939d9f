"""Algorithms as schedules: steps of transfers (src, dst, block, count, combine) and their semantics.

Importing this package registers every algorithm's builder in
:mod:`netmodels.algorithms.registry`.
"""

from . import allgather, alltoall, barriers, broadcast, combining  # noqa: F401  (they register)
