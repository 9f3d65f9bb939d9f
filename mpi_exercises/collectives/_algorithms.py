"""The algorithms a front door accepts: the registry's (:mod:`netmodels.algorithms.registry`)
for its collective, and ``"mpi"``, the MPI library's own collective.  :func:`choices` lists
them, :func:`algorithm_of` finds one, :func:`resolve` begins validating a call, and
:func:`schedule_of` builds its schedule and normalises its options.  Importing this module
does not start MPI.
"""

from __future__ import annotations

import numpy as np


def choices(collective: str) -> tuple[str, ...]:
    """The algorithms a front door of ``collective`` accepts: the registry's short names, then ``"mpi"``."""
    from netmodels.algorithms import registry

    return registry.names(collective, short=True) + ("mpi",)


def algorithm_of(collective: str, name):
    """The registry's algorithm ``name`` (short or full) of ``collective``; None for ``"mpi"``;
    ValueError naming the choices otherwise."""
    if name == "mpi":
        return None
    if isinstance(name, str):
        from netmodels.algorithms import registry

        try:
            return registry.get(name, collective)
        except ValueError:
            pass
    raise ValueError(f"algorithm must be one of {', '.join(choices(collective))}; got {name!r}")


def resolve(collective: str, algorithm, options, dtype):
    """The first steps of validating a call: ``(registry entry or None for "mpi", options as a
    dict)``; ValueError if the algorithm is unknown, ``"mpi"`` is given options, or ``dtype``
    has no MPI datatype."""
    from ..mpi_types import mpi_datatype

    entry = algorithm_of(collective, algorithm)
    options = dict(options)
    if entry is None and options:
        raise ValueError(f"algorithm 'mpi' takes no options, got {', '.join(sorted(options))}")
    mpi_datatype(dtype)
    return entry, options


def _frozen(value):
    """``value`` as a hashable, comparable key part (lists and arrays become tuples)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def schedule_of(algorithm, nprocs: int, nelems: int, options: dict):
    """``(schedule, options)``: ``algorithm`` (a registry entry) built with ``options`` (ValueError
    if one is unknown or invalid), and every option of the algorithm normalised: the value the
    builder used (``schedule.meta``, where it records it; e.g. a default block), else the one given."""
    unknown = sorted(set(options) - set(algorithm.options))
    if unknown:
        from netmodels.algorithms import registry

        takes = f"only {', '.join(algorithm.options)}" if algorithm.options else "no options"
        where = {o: [a.short for a in registry.algorithms(algorithm.collective) if o in a.options] for o in unknown}
        raise ValueError(f"{algorithm.short} takes {takes}, got {unknown}"
                         + "".join(f": {o!r} is an option of {', '.join(w)}" for o, w in where.items() if w))
    schedule = algorithm.build(nprocs, nelems, **options)
    meta = schedule.meta or {}
    used = {name: _frozen(meta.get(name, options.get(name, default)))
            for name, default in algorithm.options.items()}
    return schedule, used
