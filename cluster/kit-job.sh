#!/usr/bin/env bash
# Run one of the kit's benchmarks inside a Slurm allocation and keep its JSON.
#
#   kit-job.sh BENCHMARK [benchmark options ...]
#
# Called by the templates next to it (sbatch cluster/pingpong.sbatch); can also be run
# by hand inside `salloc`.  Settings, all optional, from the environment:
#   KIT_ROOT      the repository (default: the directory sbatch was called from)
#   KIT_VENV      the Python environment to activate (default: $KIT_ROOT/.venv, if present)
#   KIT_LAUNCHER  srun (default: srun --mpi=$KIT_SRUN_MPI) or mpiexec (the MPI's own
#                 launcher, started inside the allocation: MPICH's Hydra finds Slurm itself)
#   KIT_SRUN_MPI  the PMI plugin for srun (default pmi2: what the MPICH wheel speaks)
#   KIT_RANKS     how many ranks (default: every task of the allocation, SLURM_NTASKS)
#   KIT_RESULTS   where the JSON goes (default: $KIT_ROOT/results)
# The JSON is named BENCHMARK-CLUSTER-JOBID.json; it records the placement (nodes, ranks
# per node, cores) and whether ranks outnumbered cores.
set -euo pipefail

die() { echo "kit-job: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: kit-job.sh BENCHMARK [options]  (e.g. pingpong)"
benchmark=$1; shift
[ -n "${SLURM_JOB_ID:-}" ] || die "no Slurm allocation: submit with 'sbatch cluster/$benchmark.sbatch' from the repository root (or run inside salloc)"

root=${KIT_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}
[ -f "$root/mpi_exercises/__main__.py" ] || die "$root is not the course kit: submit from the repository root or set KIT_ROOT"
venv=${KIT_VENV:-$root/.venv}
if [ -f "$venv/bin/activate" ]; then
    # shellcheck disable=SC1091
    source "$venv/bin/activate"
fi
python -c "import mpi4py, netmodels" 2>/dev/null || die "python cannot import mpi4py and netmodels: run 'make venv' (or set KIT_VENV)"

allocated=${SLURM_NTASKS:-${SLURM_NPROCS:-}}
[ -n "$allocated" ] || die "the allocation does not say how many tasks it has (SLURM_NTASKS): submit with -n or --ntasks-per-node"
ranks=${KIT_RANKS:-$allocated}
[[ "$ranks" =~ ^[1-9][0-9]*$ ]] || die "KIT_RANKS must be a positive integer, got '$ranks'"
[ "$ranks" -le "$allocated" ] || die "$ranks ranks asked for, but the allocation has $allocated tasks"

cluster=${SLURM_CLUSTER_NAME:-$(hostname -s)}
results=${KIT_RESULTS:-$root/results}
mkdir -p "$results" 2>/dev/null || die "cannot create the results folder $results (set KIT_RESULTS to a writable folder)"
out="$results/$benchmark-$cluster-$SLURM_JOB_ID.json"

case ${KIT_LAUNCHER:-srun} in
    srun)    launch=(srun --mpi="${KIT_SRUN_MPI:-pmi2}" -n "$ranks") ;;
    mpiexec) launch=(mpiexec -n "$ranks") ;;
    *)       die "KIT_LAUNCHER must be srun or mpiexec, got '${KIT_LAUNCHER}'" ;;
esac

cd "$root"
echo "kit-job: $benchmark on $ranks ranks (job $SLURM_JOB_ID, nodes ${SLURM_JOB_NODELIST:-?}) with ${launch[*]}; results in $out"
"${launch[@]}" python -m mpi_exercises "$benchmark" --json "$out" "$@"
