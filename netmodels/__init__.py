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

from .models.alphabeta import AlphaBeta
from .models.fit import AlphaBetaFit, PiecewiseFit, fit_alpha_beta, fit_piecewise

__all__ = ["AlphaBeta", "AlphaBetaFit", "PiecewiseFit", "fit_alpha_beta", "fit_piecewise"]
