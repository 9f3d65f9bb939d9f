"""Performance models of parallel communication: pure Python and numpy, no MPI.

One sub-package per role:

- :mod:`netmodels.models`: the models (α-β, NBL f(L), the LogP family), their fits,
  and the reference machines of the papers;
- :mod:`netmodels.algorithms`: algorithms written as schedules (combining, barriers)
  and their semantics;
- :mod:`netmodels.simulate`: the time of any schedule under a model;
- :mod:`netmodels.figures`: drawings, interactive static panels and widgets.

Units are SI throughout (seconds, bytes); where a paper counts vector elements
the function says so.
"""

import importlib

#: name -> the module that defines it, imported on first use (the fits need scipy, which
#: takes half a second to import: the command line, which does not fit, starts without it)
_LAZY = {"AlphaBeta": ".models.alphabeta", "AlphaBetaFit": ".models.fit", "PiecewiseFit": ".models.fit",
         "fit_alpha_beta": ".models.fit", "fit_piecewise": ".models.fit"}

__all__ = list(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
