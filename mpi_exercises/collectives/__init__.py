"""The front doors, one module per collective, named after it: :mod:`.allreduce`,
:mod:`.barrier`, :mod:`.broadcast`, :mod:`.allgather`, :mod:`.alltoall`.  Each runs any
algorithm of its collective in :mod:`netmodels.algorithms.registry` through the
executor (:mod:`mpi_exercises.executor`), or ``"mpi"``, MPI's own collective, and each
shares the argument check and executor cache of :mod:`._door`.  Importing this package
does not start MPI.
"""
