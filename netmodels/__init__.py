"""Performance models of parallel communication: pure Python and numpy, no MPI.

Units are SI throughout (seconds, bytes); where a paper counts vector elements
the function says so.
"""

from .alphabeta import AlphaBeta
from .fit import AlphaBetaFit, PiecewiseFit, fit_alpha_beta, fit_piecewise

__all__ = ["AlphaBeta", "AlphaBetaFit", "PiecewiseFit", "fit_alpha_beta", "fit_piecewise"]
