"""The benchmarks of ``python -m mpi_exercises``: one module per command family
(:mod:`.pingpong`, :mod:`.nbl_testjig`, :mod:`.logp_bench`, :mod:`.lop_bench`,
:mod:`.bsp_bench`, :mod:`.barrier`, :mod:`.allreduce`, :mod:`.allgather`,
:mod:`.alltoall`, :mod:`.predict`, ...), all on one measurement core, :mod:`.measure`.
Importing this package does not start MPI.
"""
