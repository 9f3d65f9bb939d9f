"""The kit's prediction report: fit the network models on their own microbenchmarks, measure
the software apart, predict the collectives, measure them, and say how far off each model is.

    mpiexec -n 2 python -m mpi_exercises predict --json predict.json
    mpiexec -n 2 python -m mpi_exercises predict --calibration my_calibration.json

1. Calibration, apart from what is predicted.  Each network model of :data:`MODELS` (names
   and parameters from :mod:`netmodels.models.table`) is fitted on its own microbenchmark
   only: α-β on the ping-pong sweep (:mod:`mpi_exercises.bench.pingpong`), LogGP on
   Netgauge's PRTT method (:mod:`mpi_exercises.bench.logp_bench`), NBL on the same α and β
   with f(L) from the f(L) test jig (``--testjig``; else f(L) = 1).  The software is a
   property of the executor, not of a model: measured without any message
   (:mod:`mpi_exercises.bench.software_cost`), the same term is added to every model.
   No collective is timed during calibration, and the default vector lengths lie between the
   lengths the calibration measures.  Calibration and measurement alternate in ``--rounds``
   rounds (default 16, :data:`~.measurement.ROUNDS`): a round of every calibration benchmark, then a round of the
   collectives, so that both see the same machine; the models are fitted on the minima of all
   calibration rounds pooled, and the drift compares the fit of the first half of the rounds
   with that of the second.  ``--calibration FILE ...`` takes the models' parameters
   from files instead of measuring them (nothing of them is interleaved then, and the report
   says so): a student's own ``pingpong`` and ``logp`` results, or
   an earlier report's ``calibration`` block (with its software term), edited or written by
   hand in its shape (a paper's machine).
2. Prediction of every algorithm of every collective in :data:`COLLECTIVES` from its schedule
   (:mod:`netmodels.algorithms.registry`): per model the network time (the simulator under
   the model, in the model's own semantics), the software time, and their sum.
3. Measurement of the same algorithms through the kit's front doors, the slowest rank's time.
4. Relative errors (predicted - measured) / measured, of the models alone and with the software
   term; per model and collective the median |error| with its 95 % interval.

In every round the launch's mode is read once (:func:`mpi_exercises.bench.launch_mode.detect_mode`:
MPI's Allreduce over an exchange of 1 MiB; 0.2 s at load 4 on the kit's 2-core machine): launches a
minute apart can time long messages several times apart, so the JSON (``launch_mode``: the
readings combined, :func:`~mpi_exercises.bench.launch_mode.combined`, and each reading) and the
last line name it; under load, readings within one launch differ too.
A run with more ranks than cores is measured, but reported as not valid.  A calibration whose
measurements are too noisy (a median's 95 % interval wider than :data:`NOISY` of it) marks the
run unreliable; a fit that comes out unphysical (α, L, o or g < 0) is refused.  A new collective
is one entry of :data:`COLLECTIVES`; a new model one entry of the table, whose ``calibration``
says from which benchmarks and fits predict makes its parameters (:func:`calibrated`).

The package, by role: :mod:`.calibration` (the models' parameters from measured files, a given
calibration's checks, the drift between two calibrations; no MPI), :mod:`.measurement` (what
is measured on the machine: the calibration's microbenchmarks, the software term, the
collectives), :mod:`.comparison` (predictions of the measured rows and their errors; no MPI),
:mod:`.text` (the report's text; no MPI) and :mod:`.cli` (the command's options and run).
"""

from __future__ import annotations

from .calibration import (FILE_KINDS, FLOOR_S, MODELS, NOISY, PLAIN, STABLE_TOLERANCE, Calibration, calibrated,
                          calibration_from, drift, fits, keep_physical, load_calibration, measured_by, missing_line,
                          network_parameters, parameters_of, plain, reliability, unphysical)
from .cli import DEFAULT_SIZES, add_arguments, calibrations, halves_drift, run
from .comparison import (SIZE_CLASSES, TOLERANCE, best_models, compare, network_times, relative_error,
                         schedule_key, size_class, software_time, summarize_errors)
from .measurement import (CALIBRATION_SIZES, COLLECTIVES, ELEM_BYTES, ONE_CALL_ABOVE_BYTES, PRTT_SIZES,
                          LOGP_N, ROUNDS, Collective, calibration_round, interleaved, measure, pool)
from .text import (MODELS_PER_TABLE, drift_line, explain, last_line, reliability_line, report, row_table,
                   size_class_table)

#: the public names (the rooms' own names are reached through their modules)
__all__ = ["FILE_KINDS", "FLOOR_S", "MODELS", "NOISY", "PLAIN", "STABLE_TOLERANCE", "Calibration", "calibrated",
           "calibration_from", "drift", "fits", "keep_physical", "load_calibration", "measured_by",
           "missing_line", "network_parameters", "parameters_of", "plain", "reliability", "unphysical",
           "DEFAULT_SIZES", "add_arguments", "calibrations", "halves_drift", "run", "SIZE_CLASSES", "TOLERANCE", "best_models", "compare",
           "network_times", "relative_error", "schedule_key", "size_class", "software_time",
           "summarize_errors", "CALIBRATION_SIZES", "COLLECTIVES", "ELEM_BYTES", "ONE_CALL_ABOVE_BYTES",
           "PRTT_SIZES", "LOGP_N", "ROUNDS", "Collective", "calibration_round", "interleaved", "measure", "pool", "MODELS_PER_TABLE",
           "drift_line", "explain", "last_line", "reliability_line", "report", "row_table", "size_class_table"]
