# The course kit's commands.  Students and authors need two of them:
#   make book   build the HTML book (creates .venv on first use)
#   make test   run the whole test suite (same environment)
# and, while changing code, the unit tests alone in under a minute:
#   make test-fast   no notebook, no mpiexec, no command line, nothing slow (pytest.ini)
# Instructor targets (release, grade, feedback) are described in labs/README.md.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-requirements
JOBS   ?= 2

export PATH := $(abspath $(BIN)):$(PATH)
# Silence the debugger warning of ipykernel in tests and builds.
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# The tests start hundreds of Pythons (command lines, ranks, kernels): each reads the kit's
# modules compiled once (__pycache__/, git-ignored) rather than compiling them again, which
# PYTHONDONTWRITEBYTECODE=1 in the caller's environment would make it do (a command that
# refuses its input: 0.33 s against 0.16 s).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: book test test-fast venv clean check-outputs notebooks

venv: $(STAMP)

# MPI=wheel (default): MPI comes from PyPI (the mpich wheel).  MPI=system: mpi4py is built
# against the MPI whose compiler wrapper is $(MPICC) (a cluster's MPI, after `module load`),
# and no MPI wheel is installed.  `python -m mpi_exercises info` says which one runs.
MPI   ?= wheel
MPICC ?= mpicc

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required, found " + sys.version.split()[0])'
	@echo "Setting up the environment in $(VENV) (first run, or requirements changed): creating it, then installing requirements.txt (about a minute with a warm pip cache, a few without) ..."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@date +%s > $(VENV)/.setup-started
	$(BIN)/python -m pip install --quiet --upgrade pip
ifeq ($(MPI),system)
	@command -v $(MPICC) >/dev/null || { echo "MPI=system: no $(MPICC) on PATH (module load mpi, or set MPICC=/path/to/mpicc)" >&2; exit 2; }
	grep -vE '^(mpi4py|mpich|impi-rt)([^a-z0-9_-]|$$)' requirements.txt > $(VENV)/requirements-system-mpi.txt
	$(BIN)/python -m pip install --quiet -r $(VENV)/requirements-system-mpi.txt
	env MPICC="$$(command -v $(MPICC))" $(BIN)/python -m pip install --quiet --no-binary=mpi4py \
	  --no-cache-dir "$$(grep -E '^mpi4py==' requirements.txt)"
else ifeq ($(MPI),wheel)
	$(BIN)/python -m pip install --quiet -r requirements.txt
else
	@echo "MPI must be wheel or system, got '$(MPI)'" >&2; exit 2
endif
	@# the kit itself, editable: its two packages (and only they) are mapped into the environment,
	@# which is what the grading sandbox binds (labs/grading_sandbox.py), never this whole folder
	@# (setuptools maps a flat layout's packages with a meta path finder and says so in an
	@# information-only notice, "Editable installation. ... folders with the same name as your
	@# package": that one message is filtered, every other warning still shows)
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (course kit)" >/dev/null
	@# the compiled event loop of the loggopsim semantics, into numba's cache now (9 s once),
	@# not at its first use in a chapter, a lab or the tests
	$(BIN)/python -m netmodels simulate barrier.dissemination -P 2 --model logp --semantics loggopsim >/dev/null
	@echo "Environment ready in $$(( $$(date +%s) - $$(cat $(VENV)/.setup-started) )) s."
	@touch $@

check-outputs: $(STAMP)
	$(BIN)/python -m tests.notebook_outputs book labs/source

# For authors: re-execute every notebook in place.  Its outputs become the reference
# results that nbval checks, so review the diff before committing it.  Widget state and
# execution timestamps are not stored: they change at every run without being results.
notebooks: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.store_widget_state=False --ExecutePreprocessor.record_timing=False \
	  book/*.ipynb $(COURSE)/source/*/*.ipynb
	$(BIN)/python -m tests.notebook_outputs --strip book $(COURSE)/source

# The build also releases every lab with nbgrader (book/_ext/student_labs.py): the lab pages
# offer the student versions, zipped in _build/student-labs/ (no solutions, no hidden tests);
# and it builds the kit's wheel into _build/kit/ (book/_ext/kit_wheel.py: the two packages
# only), which the page "Install the kit" offers: what a student installs, without this repository.
book: check-outputs
	@echo "Building the book (chapters from their committed outputs, student versions of the labs, the kit's wheel) ..."
	@start=$$(date +%s); \
	$(BIN)/jupyter-book build . --warningiserror --nitpick --keep-going || exit 1; \
	echo "The book is at file://$(abspath _build/html/index.html) (built in $$(( $$(date +%s) - start )) s)"; \
	echo "The kit's wheel: $$(ls $(abspath _build/kit)/*.whl)"

# loadscope keeps a notebook's cells (and a class's tests) on one worker, in order; the
# scopes go out in the order of tests/conftest.py (the long ones first), not by their number
# of tests (xdist's default).
test: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist loadscope --no-loadscope-reorder

test-fast: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) -m "not (notebook or mpi or cli or slow)"

clean:
	rm -rf _build .pytest_cache

# ---------------------------------------------------------------- Instructor targets
# The nbgrader course is labs/ (guide: labs/README.md).  Every lab is a folder of
# labs/source/ holding notebooks with solutions and hidden tests.
#   make release    student versions in labs/release/<lab>/ (solutions, hidden tests stripped),
#                   every lab in one nbgrader (labs/release.py, 4 s for all six);
#                   make release LAB=lab1 releases that lab only (2 s)
#   make grade      autograde labs/submitted/<student>/<lab>/ (each in a sandbox, JOBS of them
#                   at once, default 2) and write labs/grades.csv; UNSAFE_GRADING=1 where no
#                   sandbox can be made; make grade LAB=lab1 grades that lab only
#   make feedback   HTML feedback in labs/feedback/<student>/<lab>/
COURSE := labs
LABS    = $(sort $(notdir $(patsubst %/,%,$(dir $(wildcard $(COURSE)/source/*/*.ipynb)))))

.PHONY: release grade feedback

release: $(STAMP)
	@$(BIN)/python $(COURSE)/release.py --course $(COURSE) $(addprefix --lab ,$(LAB))

# $(call ctrl_c,COMMAND): COMMAND, whose Ctrl-C (its one line, status 130) make does not follow
# with a line of its own ("Error 130"): make, which took the Ctrl-C too, then ends by it (status
# 130); a COMMAND interrupted alone (kill -INT) still fails the target
ctrl_c = trap 'i=1' INT; $(1) || { s=$$?; test "$$s$${i-}" = 1301 || exit $$s; }

grade: $(STAMP)
	@echo "$(BIN)/python $(COURSE)/grade.py --course $(COURSE) --jobs $(JOBS) $(addprefix --lab ,$(LAB))"
	@$(call ctrl_c,$(BIN)/python $(COURSE)/grade.py --course $(COURSE) --jobs $(JOBS) $(addprefix --lab ,$(LAB)))

# A submission whose feedback fails is reported (nbgrader names it) and the others go on.
feedback: $(STAMP)
	@failed=""; for lab in $(LABS); do \
	  if ls -d $(COURSE)/autograded/*/$$lab >/dev/null 2>&1; then \
	    (cd $(COURSE) && $(abspath $(BIN))/nbgrader generate_feedback $$lab --force) || failed="$$failed $$lab"; \
	  else echo "$$lab: no graded submission, no feedback"; fi; done; \
	echo "Feedback: $(abspath $(COURSE))/feedback/<student>/<lab>/<lab>.html (each page alone, math included)"; \
	if [ -n "$$failed" ]; then echo "feedback incomplete for:$$failed (see the errors above)" >&2; exit 1; fi

# The class's measured machines side by side, one static page per lab (labs/README.md):
#   make class-report LAB=lab1   labs/feedback/_class/lab1.html and lab1.csv; NAMES=1: student ids,
#                                not pseudonyms
.PHONY: class-report
class-report: $(STAMP)
	@test -n "$(LAB)" || { echo "usage: make class-report LAB=labN (N = 1 to 5) [NAMES=1]" >&2; exit 2; }
	@echo "$(BIN)/python $(COURSE)/class_report.py --lab $(LAB) --course $(COURSE)$(if $(NAMES), --names)"
	@$(call ctrl_c,$(BIN)/python $(COURSE)/class_report.py --lab $(LAB) --course $(COURSE)$(if $(NAMES), --names))

# ---------------------------------------------------------------- What Python costs (opt-in)
# The C ping-pong of benchmarks/pingpong.c, built with the MPI wheel's own mpicc and run on
# 2 ranks; its JSON (with command, date, cores and load) goes to results/pingpong_c.json
# (git-ignored).  The chapter "Latency and bandwidth" reads the committed reference
# book/data/pingpong_c.json instead: `make refresh-pingpong-c` measures again into it (then
# re-execute alpha_beta.ipynb, review the diff and commit both).  Needs a C compiler.
.PHONY: pingpong-c refresh-pingpong-c
PINGPONG_C_JSON   ?= results/pingpong_c.json
PINGPONG_C_TARGET := pingpong-c

pingpong-c: $(STAMP)
	@if ! command -v cc >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then \
	  echo "pingpong-c: no C compiler (cc or gcc) found: skipped"; exit 0; fi; \
	mkdir -p _build/bench && \
	$(BIN)/mpicc -O2 -o _build/bench/pingpong benchmarks/pingpong.c && \
	$(BIN)/python benchmarks/run_pingpong_c.py _build/bench/pingpong --json $(PINGPONG_C_JSON) \
	  --command "make $(PINGPONG_C_TARGET) (mpiexec -n 2 pingpong)"

refresh-pingpong-c: PINGPONG_C_JSON = book/data/pingpong_c.json
refresh-pingpong-c: PINGPONG_C_TARGET = refresh-pingpong-c
refresh-pingpong-c: pingpong-c

# ---------------------------------------------------------------- Measured reference data (opt-in)
# Every measured data set a chapter reads (book/data/*.json but the simulated ones), measured
# again by its command with today's measurement core.  `make measure-references` writes them
# to results/reference/ (git-ignored); `make refresh-references` writes them into book/data/
# and refreshes the C ping-pong too (refresh-pingpong-c).  Run it on a quiet machine (no other
# jobs: each JSON records the load average, the line before each run shows it), then
# `make notebooks`, review the diffs and explain every figure whose meaning changed, commit.
# Takes a few minutes (3 min on the 2-core VM).  Ranks above the cores (barrier on 4, lop on 8, the oversubscribed
# f(L) table, the alltoall on 4) are what the chapters show on purpose.
# The chapters show each of these commands writing to results/ (a reader who copies one must
# not overwrite a reference; tests/test_no_reference_writes.py checks every page): these
# targets are the one way to refresh the references.  `make list-references` prints the
# command of each measured file of book/data (REFERENCE_RUNS) without running it.
.PHONY: measure-references refresh-references list-references
REFERENCE_DIR ?= results/reference
#: ranks, output file, command and options of each measured reference data set
REFERENCE_RUNS := \
  "2 pingpong_reference.json pingpong" \
  "2 pingpong_python.json pingpong --iterations 10000 --warmup 1000" \
  "2 pingpong_huge_pages.json pingpong --pages huge" \
  "2 logp_reference.json logp --repetitions 2000" \
  "2 bsp_reference.json bsp --repetitions 300 --warmup 20" \
  "2 barrier_reference.json barrier-bench --repetitions 300 --inner 50" \
  "4 barrier_p4_reference.json barrier-bench --repetitions 300 --inner 50" \
  "8 lop_reference.json lop" \
  "2 nbl_testjig_reference.json nbl-testjig --repetitions 100" \
  "2 software_cost_reference.json software-cost" \
  "4 nbl_testjig_oversubscribed.json nbl-testjig --allow-oversubscribed" \
  "2 predict_reference.json predict" \
  "2 alltoall_p2_ppn2_delay0us.json bench-alltoall --ppn 2 --inter-delay 0 --sizes 1,64,512,4k,32k --modes executor --iterations 100" \
  "2 alltoall_p2_ppn1_delay500us.json bench-alltoall --ppn 1 --inter-delay 500e-6 --sizes 1,64,512,4k,32k --modes executor --iterations 100" \
  "4 alltoall_p4_ppn2_delay500us.json bench-alltoall --ppn 2 --inter-delay 500e-6 --sizes 1,64,512,4k,32k --modes executor --iterations 100"

measure-references: $(STAMP)
	@mkdir -p $(REFERENCE_DIR)
	@for run in $(REFERENCE_RUNS); do \
	  set -- $$run; ranks=$$1; file=$$2; shift 2; \
	  echo "== $(REFERENCE_DIR)/$$file: mpiexec -n $$ranks python -m mpi_exercises $$* ($$(uptime | sed 's/.*load/load/'))"; \
	  $(BIN)/mpiexec -n $$ranks $(BIN)/python -m mpi_exercises "$$@" --no-progress \
	    --json $(REFERENCE_DIR)/$$file >/dev/null || exit 1; \
	done

list-references:
	@for run in $(REFERENCE_RUNS); do \
	  set -- $$run; ranks=$$1; file=$$2; shift 2; \
	  echo "mpiexec -n $$ranks python -m mpi_exercises $$* --no-progress --json book/data/$$file"; \
	done

refresh-references: $(STAMP)
	$(MAKE) measure-references REFERENCE_DIR=book/data
	$(BIN)/mpiexec -n 2 $(BIN)/python -m mpi_exercises pingpong --no-progress --json $(COURSE)/source/lab1/pingpong.json >/dev/null
	$(BIN)/mpiexec -n 2 $(BIN)/python -m mpi_exercises logp --no-progress --json $(COURSE)/source/lab3/logp.json >/dev/null
	$(BIN)/mpiexec -n 2 $(BIN)/python -m mpi_exercises predict --calibration $(COURSE)/source/lab1/pingpong.json \
	  $(COURSE)/source/lab3/logp.json --no-progress --json $(COURSE)/source/lab5/predict.json >/dev/null   # from labs 1 and 3
	$(BIN)/mpiexec -n 2 $(BIN)/python -m mpi_exercises barrier-bench --no-progress --json $(COURSE)/source/lab3/barriers.json >/dev/null
	$(MAKE) refresh-pingpong-c
