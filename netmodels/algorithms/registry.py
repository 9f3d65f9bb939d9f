"""The one list of algorithms: ``"collective.name"`` -> its one builder.

Every algorithm of the book is registered here once, by the module that builds it::

    @register("allreduce.ring")
    def ring(nprocs: int, nelems: int) -> ArraySchedule: ...

A builder takes ``(nprocs, nelems, **options)`` and returns an
:class:`~netmodels.algorithms.arrays.ArraySchedule` (``.to_schedule()`` gives the
per-transfer view).  Its options are its keyword parameters with defaults, read from its
signature.  What ``nelems`` counts depends on the collective (:data:`SIZE_MEANING`).

Every other list of algorithms (the front doors' choices, the command lines' ``--help``,
``predict``, the simulator's sweeps, the LogGOPSim cases) is read from here with
:func:`names` or :func:`algorithms`; nothing else keeps a list of names.

    >>> import netmodels.algorithms  # registers every builder
    >>> get("dissemination").name
    'barrier.dissemination'
    >>> build("allreduce.ring", 4, 8).nsteps
    6
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

#: the collectives, in the order the book meets them
COLLECTIVES = ("allreduce", "barrier", "broadcast", "allgather", "alltoall")

#: what ``nelems`` counts for each collective (vector elements, see
#: :mod:`netmodels.algorithms.schedule`)
SIZE_MEANING = {
    "allreduce": "elements of every rank's vector",
    "barrier": "nothing (a barrier carries no data: nelems = 0)",
    "broadcast": "elements of the root's vector",
    "allgather": "elements of every rank's own block",
    "alltoall": "elements every rank sends every rank",
}


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm: its name, its builder and the options the builder takes."""

    name: str
    builder: Callable = field(repr=False)
    options: dict = field(default_factory=dict)
    summary: str = ""

    @property
    def collective(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def short(self) -> str:
        """The name without its collective (``"ring"`` for ``"allreduce.ring"``)."""
        return self.name.split(".", 1)[1]

    def check_options(self, options) -> None:
        """ValueError unless every key of ``options`` is an option of this algorithm; the
        message names the algorithms that take each rejected option."""
        check_options(self.name, options)

    def takes(self, option: str) -> bool:
        """True if the builder has the keyword option ``option`` (``"block"``: pipelined,
        ``"mesh"``: laid out on a mesh, ``"k"``, ``"root"``, ...)."""
        return option in self.options

    def build(self, nprocs: int, nelems: int = 0, **options):
        """The schedule on ``nprocs`` ranks with ``nelems`` (see :data:`SIZE_MEANING`).

        An option given as None that this algorithm does not take is ignored (None means
        "not given"), so one call can pass the same keywords to every algorithm of a
        collective; any other option it does not take raises ValueError.
        """
        options = {k: v for k, v in options.items() if v is not None or k in self.options}
        self.check_options(options)
        if self.collective == "barrier" and nelems != 0:
            raise ValueError(f"a barrier carries no data: nelems must be 0, got {nelems!r}")
        return self.builder(nprocs, nelems, **options)


_REGISTRY: dict[str, Algorithm] = {}


def register(name: str):
    """Decorator: register ``builder(nprocs, nelems, **options)`` as ``name``
    (``"collective.algorithm"``, the collective one of :data:`COLLECTIVES`)."""
    collective, _, short = name.partition(".")
    if collective not in COLLECTIVES or not short:
        raise ValueError(f"name must be 'collective.algorithm' with a collective of "
                         f"{', '.join(COLLECTIVES)}; got {name!r}")

    def add(builder):
        if name in _REGISTRY and _REGISTRY[name].builder is not builder:
            raise ValueError(f"{name} is registered twice")
        params = list(inspect.signature(builder).parameters.values())[2:]
        options = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
        doc = inspect.getdoc(builder) or ""
        _REGISTRY[name] = Algorithm(name, builder, options, doc.split("\n\n")[0].replace("\n", " "))
        return builder

    return add


def check_options(name: str, options, accepted: dict | None = None) -> None:
    """ValueError unless every key of ``options`` is an option of algorithm ``name``.

    ``accepted`` maps algorithm names to the option names they take (default: the
    registered algorithms and their builders' options); the message names each rejected
    option and the algorithms that do take it.
    """
    if accepted is None:
        accepted = {a.name: tuple(a.options) for a in algorithms()}
    mine = list(accepted.get(name, ()))
    bad = sorted(set(options) - set(mine))
    if bad:
        takers = {o: sorted(a for a, opts in accepted.items() if o in opts) for o in bad}
        where = "; ".join(f"{o!r} is an option of {', '.join(t) if t else 'no algorithm'}"
                          for o, t in takers.items())
        raise ValueError(f"{name} takes {f'only {mine}' if mine else 'no options'}, got {bad}: {where}")


def _loaded() -> dict[str, Algorithm]:
    # Importing this module imports its package first, whose __init__ imports every
    # builder module: the registry is complete once an import of it has returned.
    return _REGISTRY


def algorithms(collective: str | None = None) -> tuple[Algorithm, ...]:
    """Every registered algorithm (of one ``collective``), in collective then name order."""
    reg = _loaded()
    if collective is not None and collective not in COLLECTIVES:
        raise ValueError(f"collective must be one of {', '.join(COLLECTIVES)}; got {collective!r}")
    return tuple(sorted((a for a in reg.values() if collective in (None, a.collective)),
                       key=lambda a: (COLLECTIVES.index(a.collective), a.name)))


def names(collective: str | None = None, *, short: bool = False) -> tuple[str, ...]:
    """The registered names (of one ``collective``); ``short=True``: without the collective."""
    return tuple(a.short if short else a.name for a in algorithms(collective))


def get(name: str, collective: str | None = None) -> Algorithm:
    """The algorithm called ``name``: its full name, or its short name when only one
    collective (or the given ``collective``) has an algorithm of that name."""
    reg = _loaded()
    if collective is not None and "." not in name:
        name = f"{collective}.{name}"
    if name in reg and (collective is None or reg[name].collective == collective):
        return reg[name]
    matches = sorted(k for k in reg if k.split(".", 1)[1] == name)
    if len(matches) == 1:
        return reg[matches[0]]
    if matches:
        raise ValueError(f"algorithm {name!r} is ambiguous: say which of {', '.join(matches)}")
    known = names(collective, short=collective is not None)
    raise ValueError(f"algorithm must be one of {', '.join(known)}; got {name!r}")


def build(name: str, nprocs: int, nelems: int = 0, **options):
    """The :class:`~netmodels.algorithms.arrays.ArraySchedule` of ``name`` (see :func:`get`)."""
    return get(name).build(nprocs, nelems, **options)
