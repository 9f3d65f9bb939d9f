"""nbgrader preprocessors used by ``nbgrader_config.py``, and the run that feeds the feedback pages.

``ExecuteRestartingDeadKernel`` (autograde): nbgrader's ``Execute`` gives up on the whole
notebook when the kernel dies (``exit()``, ``os._exit()``, a crash), and the student gets
nothing.  This one records the death in the cell, starts a fresh kernel and goes on: the
cells after it run without the lost variables, as they would for the student.  It also bounds
each cell's outputs as they arrive (not only once the cell is done), and checks from outside,
around each test cell, that the kernel still runs code as written (``TAMPERED``).

``LimitOutputSize`` (autograde): nbgrader's ``LimitOutput`` counts lines: one ``print("x" * 10**7)`` is a single line of
10 MB that would end up in the gradebook's notebook and in the student's HTML feedback.
``LimitOutputSize`` also caps the characters of every output and drops oversized binary
outputs (images), keeping a note of what was cut.

A feedback page shows the student's own outputs (their fit, plots, results) and the message of
every visible test, never a hidden test's code or message, so that a lab can be given again:

- ``run_for_feedback`` (run by ``grade.py`` after each autograde, in the same sandbox; also
  ``python grading_preprocessors.py GRADED OUT``): the graded notebook is run again in a kernel
  of its own with its hidden tests removed, into ``autograded/<student>/<lab>.feedback-run/``.
  The graded run's outputs cannot be shown from the first hidden test on: its kernel, which the
  student's code controls, has seen hidden test code and could print it, encoded or not
  (IPython keeps every cell's source in ``In``; a traceback quotes the failing lines).  The run
  for feedback never sees any: its outputs are the student's own, and its test cells hold only
  the visible tests, whose failures show their messages.
- ``GetGradesMarkingPending``: nbgrader's ``GetGrades``, and which written answers wait for
  the instructor (:func:`is_pending`), so that a page says "pending" instead of "0 / 2".
- ``HideHiddenTestsInFeedback``: removes the hidden regions from the cells' sources and takes
  every code cell's outputs from the run for feedback.  A test cell that failed while grading
  and whose visible part passed failed in a hidden test: it says so, without the message.
  Without a run for feedback (a submission graded by an older ``grade.py``, or a run that did
  not finish) every code cell from the first hidden test on shows its score instead of its
  outputs.  Unlike nbgrader's own ``ClearHiddenTests`` it never raises: a student cell may
  contain the marker text, any number of times.
- ``TidyErrorsForFeedback``: the first error of the notebook outside a test cell is shown
  whole; a ``NameError`` after it (a name the failed cell never defined) is one line, "not run
  because of the error above", without its traceback; and no output shows a path of the grading machine (the
  scratch folder is ``.``, the course ``<course>``, the Python environment ``<python>``, the
  home folder ``~``: :func:`scrub_paths`).
- ``InlineMathJax``: MathJax 3 inside the page (``tex-svg-full.js`` of ``django-static-mathjax``,
  gzip-compressed and base64-encoded, about 0.95 MB, unpacked by the browser's
  ``DecompressionStream``), so that a page handed out on its own renders its math offline.
  The SVG output needs no font files; the full TeX input needs no extension loaded later.
"""

from __future__ import annotations

import ast
import base64
import copy
import functools
import gzip
import os
import re
import secrets
import sys
from pathlib import Path

import nbformat
import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync
from nbgrader.preprocessors import Execute, GetGrades, LimitOutput, NbGraderPreprocessor
from traitlets import Bool, Integer, List, Unicode, default


NOTE = "\n... output truncated while grading ({} characters) ...\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + NOTE.format(len(text))


#: characters of output a cell may send while it runs (streams, results, displays, errors,
#: widget messages); past it, further outputs are dropped as they arrive and a note is kept.
#: (The sandboxed kernel itself cuts its stdout and its stderr at a million characters each.)
OUTPUT_BUDGET = 2_000_000
#: largest part of a message the grader accepts from a kernel, bytes (a larger one is dropped by
#: ZeroMQ before it is read: the kernel's connection is cut and made again)
MESSAGE_BYTES = 16 * 2**20
#: seconds the grader's probe of the kernel may take (at least; it takes well under one)
PROBE_TIMEOUT = 120
#: ``ename`` of the error the grader puts first in a test cell that did not run as written:
#: nbgrader scores the cell 0, ``grade.py`` flags the submission
TAMPERED = "TamperingDetected"
#: names in a submission's own code that reach into what runs and reports the tests: flagged for
#: the instructor to read (``grade.py``), not scored (a change the checks above see scores 0)
SUSPECT = re.compile(r"\b(input_transformers\w*|input_transformer_manager|ast_transformers|displayhook|"
                     r"excepthook|showtraceback|_showtraceback|set_custom_exc|display_pub|display_trap|"
                     r"builtin_trap|events\.register|__builtins__|builtins|shell_handlers|iopub_socket)\b")


def _chars(obj, limit: int) -> int:
    """Characters of the strings (and bytes) in ``obj`` (dicts, lists), counted up to past ``limit``."""
    if isinstance(obj, (str, bytes)):
        return len(obj)
    total, todo = 0, [obj]
    while todo and total <= limit:
        item = todo.pop()
        if isinstance(item, (str, bytes, bytearray, memoryview)):
            total += len(item)
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
    return total


class BoundedKernelClient(AsyncKernelClient):
    """A kernel client whose sockets refuse message parts over :data:`MESSAGE_BYTES`."""

    @default("context")
    def _context_default(self):
        self._created_context = True
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, MESSAGE_BYTES)   # for every socket made from it
        return context


class ExecuteRestartingDeadKernel(Execute):
    """``Execute`` that survives the death of the kernel, bounds outputs as they arrive, and
    checks that each test cell runs as written.

    - A dead kernel is restarted and the next cells run.  A kernel may also die just after a
      cell that called ``exit()`` replied; the death then shows at the next cell, which is run
      again once in the fresh kernel.
    - Outputs: at most ``output_budget`` characters per cell are kept as they arrive (the rest is
      dropped, with a note), each message part at most :data:`MESSAGE_BYTES`, so that a cell
      printing gigabytes cannot fill the grader's memory (``LimitOutputSize`` then cuts further).
    - Tampering: before and after each test cell the grader runs a probe of its own (random
      nonces, not stored in the history): it must fail its own ``assert`` with its message,
      print its nonce, and find IPython's input and output machinery, the built-ins, ``numpy`` and
      ``math`` as they were when the kernel started (the identities of their functions).  A test
      cell that also shows a result its code does not compute, or clears its outputs, is
      suspect too.  Such a test scores 0 (an error :data:`TAMPERED` first in its outputs) and
      the log says why.  The kernel is the student's: a probe written against this one can
      still be fooled; it catches the generic ways (input or AST transformers, replaced hooks
      or built-ins, patched numpy), and the submission's code is in plain view.
    """

    output_budget = Integer(OUTPUT_BUDGET, help="characters of output kept per cell as it runs").tag(config=True)
    check_tampering = Bool(True, help="probe the kernel's machinery around each test cell").tag(config=True)

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.client_factory = BoundedKernelClient
        return km

    def preprocess_cell(self, cell, resources, index):
        for attempt in (1, 2):
            try:
                return self._run_checked(cell, resources, index)
            except DeadKernelError:
                self.log.warning("The kernel died in cell %d (attempt %d): restarting it", index, attempt)
                self._baseline = None
                run_sync(self.km.restart_kernel)(now=True)
                run_sync(self.kc.wait_for_ready)(timeout=self.startup_timeout)
        cell.outputs.append(nbformat.v4.new_output(
            "error", ename="DeadKernelError",
            evalue="the kernel died while running this cell; the next cells run in a new kernel",
            traceback=["DeadKernelError: the kernel died while running this cell (exit(), os._exit(), "
                       "a crash); the next cells run in a new kernel, without this cell's variables"]))
        return cell, self.resources

    # ------------------------------------------------------------ outputs, bounded as they arrive
    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        self._spent, self._dropped, self._cleared, self._results = 0, 0, False, 0
        try:
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        except CellTimeoutError as exc:   # replied, but its outputs never ended: some were lost
            if "Timeout waiting for IOPub output" not in str(exc):
                raise
            self.log.warning("Cell %d: outputs lost (a message over %d bytes, or no end)", cell_index,
                             MESSAGE_BYTES)
            cell.outputs.append(nbformat.v4.new_output("error", ename="OutputLost", evalue=(
                f"outputs of this cell were lost: a message over {MESSAGE_BYTES} bytes, or no end"),
                traceback=[f"OutputLost: outputs of this cell were lost (a message over {MESSAGE_BYTES} "
                           "bytes, or none that ended the cell); a test cell scores 0"]))
            self.nb.cells[cell_index] = cell
            self.kc.stop_channels()       # ZeroMQ cut the connection that carried it: a new client
            self.kc = self.km.client()
            self.kc.start_channels()
            await self.kc.wait_for_ready(timeout=self.startup_timeout)
            self.kc.allow_stdin = False
        if self._dropped:
            cell.outputs.append(nbformat.v4.new_output("display_data", data={"text/plain": (
                f"[grader] this cell's output was cut while it ran: {self.output_budget} characters kept, "
                f"{self._dropped} or more dropped")}))
        return cell

    execute_cell = run_sync(async_execute_cell)

    def process_message(self, msg, cell, cell_index):
        kind, content = msg["msg_type"], msg["content"]
        if kind in ("status", "execute_input"):
            return super().process_message(msg, cell, cell_index)
        if kind == "clear_output":
            self._cleared = True
            return super().process_message(msg, cell, cell_index)
        left = max(self.output_budget - self._spent, 0)
        size = _chars(content, left)
        if size <= left:
            self._spent += size
            self._results += kind == "execute_result"
            return super().process_message(msg, cell, cell_index)
        self._spent = self.output_budget
        if kind == "stream" and left:
            self._dropped += size - left
            content["text"] = str(content.get("text", ""))[:left]
            return super().process_message(msg, cell, cell_index)
        if kind == "error":           # an error always counts: cut its text, keep it
            keep = max(left, 2000)
            content["evalue"] = str(content.get("evalue", ""))[:keep]
            lines, kept = [], 0
            for line in content.get("traceback", []) if isinstance(content.get("traceback"), list) else []:
                line = str(line)[:keep - kept]
                lines.append(line)
                kept += len(line)
                if kept >= keep:
                    break
            content["traceback"] = lines
            self._dropped += size - keep
            return super().process_message(msg, cell, cell_index)
        self._dropped += size
        return None

    # ------------------------------------------------------------ tampering
    _baseline = None

    def _run_checked(self, cell, resources, index):
        test = (cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade")
                and not cell.metadata.get("nbgrader", {}).get("solution"))
        if not self.check_tampering or not cell.source.strip() or (not test and self._baseline is not None):
            return super().preprocess_cell(cell, resources, index)
        if self._baseline is None:       # a new kernel: what it is before any cell of the notebook
            why, found = self._probe(cell, index, None)
            self._baseline = found or f"!{why}"
        why = self._probe(cell, index, self._baseline)[0] if test else None
        cell, resources = super().preprocess_cell(cell, resources, index)
        if not test:
            return cell, resources
        if why is None and self._results and not _ends_in_expression(cell.source):
            why = "it showed a result its code does not compute"
        if why is None and self._cleared:
            why = "its outputs were cleared while it ran"
        why = why or self._probe(cell, index, self._baseline)[0]
        if why:
            self.log.warning("Test cell %d (%s) did not run as written: %s; scored 0", index,
                             cell.metadata["nbgrader"].get("grade_id"), why)
            cell.outputs.insert(0, nbformat.v4.new_output("error", ename=TAMPERED, evalue=why, traceback=[
                f"{TAMPERED}: this test did not run as written ({why}): the notebook changed how "
                "the kernel runs code or reports results; the test scores 0"]))
        return cell, resources

    def _probe(self, cell, index, baseline):
        """Run the grader's probe in the kernel: (what is wrong or None, the fingerprint)."""
        said, failing = secrets.token_hex(8), secrets.token_hex(8)
        probe = nbformat.v4.new_code_cell(_PROBE.format(name=f"_kit_probe_{said}", said=said, failing=failing))
        timeout, self.timeout = self.timeout, max(self.timeout or 0, PROBE_TIMEOUT)   # never the load's fault
        try:
            self.execute_cell(probe, index, store_history=False)
        except CellTimeoutError:
            return f"the grader's probe did not finish in {self.timeout} s", None
        finally:
            self.timeout = timeout
            self.nb.cells[index] = cell        # nbclient put the probe in the cell's place
        if any(o.get("ename") == "CellTimeoutError" for o in probe.outputs):
            return f"the grader's probe did not finish in {max(timeout or 0, PROBE_TIMEOUT)} s", None
        text = "".join(o.get("text", "") for o in probe.outputs if o.get("output_type") == "stream"
                       and o.get("name") == "stdout")
        found = [line.split()[1] for line in text.splitlines() if line.split()[::2] == [said, failing]]
        if not found:          # its code did not run as written, or its output did not come back
            return "the grader's probe did not run as sent (its nonce never came back)", None
        if baseline is not None and baseline.startswith("!"):
            return f"the grader's probe failed when the kernel started: {baseline[1:]}", found[0]
        if baseline is not None and found[0] != baseline:
            return ("IPython's input or output machinery, a built-in, numpy or math was replaced "
                    "since the kernel started"), found[0]
        return None, found[0]


def _ends_in_expression(source: str) -> bool:
    """Whether the code ``source`` ends with an expression (whose value IPython shows)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    return bool(body) and isinstance(body[-1], ast.Expr)


# Run in the kernel (a cell of its own, not in its history): fail an assert with the second nonce,
# catch it, print the first nonce, a fingerprint of what runs and reports the cells' code, and
# the assert's message.
_PROBE = '''
def {name}():
    import builtins, hashlib, importlib, os, sys
    seen = []
    def add(obj):
        func = getattr(obj, "__func__", None)
        if func is not None:           # a bound method: made anew at each access
            seen.append(id(getattr(obj, "__self__", None)))
            obj = func
        seen.append(id(obj))
        for attr in ("__code__", "__defaults__", "__kwdefaults__"):
            seen.append(id(getattr(obj, attr, None)))
    def space(ns):
        for key in sorted(k for k in ns if isinstance(k, str)):
            value = ns[key]
            if callable(value) or isinstance(value, (property, classmethod, staticmethod)):
                seen.append(key)
                add(value)
    space(vars(builtins))
    for module in ("ast", "codeop", "math", "numpy", "numpy.testing", "IPython.core.interactiveshell",
                   "IPython.core.inputtransformer2", "IPython.core.compilerop", "IPython.core.displayhook",
                   "IPython.core.displaypub", "IPython.core.ultratb", "ipykernel.zmqshell", "ipykernel.ipkernel",
                   "ipykernel.kernelbase", "ipykernel.iostream", "ipykernel.displayhook", "jupyter_client.session"):
        path = sys.path[:]          # never a module of the submission's folder
        sys.path[:] = [p for p in path if os.path.abspath(p or ".") != os.getcwd()]
        try:
            space(vars(importlib.import_module(module)))
        except ImportError:
            seen.append(module)
        finally:
            sys.path[:] = path
    from IPython import get_ipython
    ip = get_ipython()
    kernel = getattr(ip, "kernel", None)
    parts = [ip, kernel, getattr(kernel, "session", None), ip.displayhook, ip.display_pub, ip.display_trap,
             ip.builtin_trap, ip.compile, ip.input_transformer_manager, ip.InteractiveTB, ip.SyntaxTB,
             sys.stdout, sys.stderr, sys.displayhook, sys.excepthook, ip.display_trap.hook, ip.CustomTB]
    for part in parts:
        add(part)
        for cls in type(part).__mro__:
            space(vars(cls))
    space({{k: v for k, v in vars(ip).items() if callable(v)}})
    manager = ip.input_transformer_manager
    for chain in (ip.input_transformers_cleanup, ip.input_transformers_post, ip.ast_transformers,
                  manager.cleanup_transforms, manager.line_transforms, manager.token_transformers,
                  ip.custom_exceptions, list(getattr(kernel, "shell_handlers", {{}}).values())):
        seen.append(len(chain))
        for item in chain:
            add(item)
    return hashlib.sha256(repr(seen).encode()).hexdigest()[:32]
try:
    try:
        assert False, {failing!r}
    except AssertionError as _kit_error:
        print({said!r}, {name}(), *_kit_error.args)
        del _kit_error
finally:
    del {name}
'''


class LimitOutputSize(LimitOutput):
    """``LimitOutput`` (lines) plus a cap on characters per output (-1: no cap)."""

    max_chars = Integer(20_000, help="maximum characters kept per output (-1 means no limit)").tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        limit = self.max_chars
        if limit < 0 or cell.cell_type != "code":
            return cell, resources
        for out in cell.outputs:
            kind = out.output_type
            if kind == "stream":
                out.text = _cut(out.text, limit)
            elif kind == "error":
                out.evalue = _cut(str(out.evalue), limit)
                out.traceback = [_cut(line, limit) for line in out.traceback]
            elif kind in ("execute_result", "display_data"):
                for mime, value in list(out.data.items()):
                    text = "".join(value) if isinstance(value, list) else str(value)
                    if len(text) <= limit or (mime.startswith("image/") and len(text) <= 50 * limit):
                        continue  # small, or an ordinary figure
                    if mime == "text/plain":
                        out.data[mime] = _cut(text, limit)
                    else:
                        del out.data[mime]
                if not out.data:
                    out.data["text/plain"] = "... output removed while grading (too large) ..."
        return cell, resources


class HideHiddenTestsInFeedback(NbGraderPreprocessor):
    """Feedback without hidden tests: their regions removed, outputs from the run for feedback."""

    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS").tag(config=True)
    display_data_priority = List().tag(config=True)  # set by the HTML exporter; unused here

    def preprocess(self, nb, resources):
        for cell in nb.cells:       # the page's notes are the grader's: none from the submission
            cell.metadata.pop(NOTES, None)
            tags = cell.metadata.get("tags")     # they become class names on the page: one word each
            if tags is not None:
                cell.metadata["tags"] = ([t for t in tags if isinstance(t, str) and TAG.fullmatch(t)]
                                         if isinstance(tags, list) else [])
        run = _feedback_run(nb, resources)
        if run is None:
            return self._hide_after_first_hidden_test(nb), resources
        for cell, fresh in zip(nb.cells, run.cells):
            hidden = self.begin_test_delimeter in cell.source
            if hidden:
                cell.source = self.without_hidden(cell.source)
            if cell.cell_type != "code":
                continue
            cell.outputs, cell.execution_count = fresh.outputs, fresh.get("execution_count")
            meta = cell.metadata.get("nbgrader", {})
            if not (meta.get("grade") and not meta.get("solution") and meta.get("score") is not None):
                continue
            failed = float(meta["score"]) < float(meta.get("points", 0))
            if failed and not any(o.output_type == "error" for o in cell.outputs):
                cell.metadata.setdefault(NOTES, []).append(
                    "A hidden test of this cell failed; its message is not shown." if hidden else
                    "This test failed while grading, and passed when your notebook was run again "
                    "for this page: its result depends on something that changed between the runs.")
        return nb, resources

    def without_hidden(self, source: str) -> str:
        """``source`` without its hidden regions (an unclosed one runs to the end)."""
        kept, hidden = [], False
        for line in source.split("\n"):
            if self.begin_test_delimeter in line:
                hidden = True
            elif self.end_test_delimeter in line:
                hidden = False
            elif not hidden:
                kept.append(line)
        return "\n".join(kept)

    def _hide_after_first_hidden_test(self, nb):
        seen = False
        for cell in nb.cells:
            if self.begin_test_delimeter in cell.source:
                cell.source = self.without_hidden(cell.source)
                seen = True
            if seen and cell.cell_type == "code":
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=_note(cell))]
        return nb


def _note(cell) -> str:
    meta = cell.metadata.get("nbgrader", {})
    head = "[output not shown in feedback: this cell ran after hidden tests]"
    if meta.get("grade") and not meta.get("solution") and meta.get("score") is not None:
        verdict = "passed" if float(meta["score"]) >= float(meta.get("points", 0)) else "failed"
        return f"{head}\nTest {verdict}: {float(meta['score']):g} of {float(meta.get('points', 0)):g} points\n"
    return head + "\n"


class TidyErrorsForFeedback(NbGraderPreprocessor):
    """The first error whole, each later ``NameError`` one line without a traceback, and no path
    of the grading machine in any output (module docstring)."""

    def preprocess(self, nb, resources):
        paths = grader_paths(resources)
        first = None
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            for out in cell.get("outputs", []):
                if out.get("output_type") == "error":
                    if first is not None and out.get("ename") == "NameError":
                        name = re.search(r"name '([^']{1,100})' is not defined", str(out.get("evalue", "")))
                        missing = f"`{name.group(1)}` was never defined" if name else "a name was never defined"
                        out["traceback"] = [f"Not run because of the error above: {missing}."]
                    meta = cell.metadata.get("nbgrader", {})
                    test = meta.get("grade") and not meta.get("solution")    # defines nothing later cells use
                    first = index if first is None and not test else first
                _scrub_output(out, paths)
        return nb, resources


#: the folder name of a grading kernel's scratch copy of a submission (``grade.py``:
#: ``mkdtemp(prefix=...)`` in the temporary folder, whichever it was when grading)
SCRATCH = "/labs-grade-"
#: what ends a path in a text (a blank or a quote), and a folder's name
_PATH_END = " \t\n\r'\""
_NAME = re.compile(r"[^/\s'\"]*")


def grader_paths(resources=None) -> list[tuple[str, str]]:
    """(path of the grading machine, what a page shows instead), longest first: the course (this
    folder, the working folder, and the one above ``autograded/`` of the notebook converted), the
    Python environments (``<python>``) and the packages (their name) the kernel saw, the home folder."""
    import grading_sandbox

    pairs = {os.path.realpath(Path(__file__).parent): "<course>", os.path.realpath(os.getcwd()): "<course>"}
    where = (resources or {}).get("metadata", {}).get("path")
    if where and Path(where).resolve().parent.parent.name == "autograded":
        pairs[os.path.realpath(Path(where).resolve().parents[2])] = "<course>"
    prefixes = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    for folder in grading_sandbox.python_dirs():     # environments, and packages by their name
        pairs[folder] = "<python>" if folder in prefixes else Path(folder).name
    pairs.setdefault(os.path.realpath(os.path.expanduser("~")), "~")
    return sorted(((k, v) for k, v in pairs.items() if len(k) > 1), key=lambda kv: -len(kv[0]))


def scrub_paths(text: str, paths: list[tuple[str, str]]) -> str:
    """``text`` with the scratch folder shown as ``.`` and each path of ``paths`` replaced."""
    parts, done, at = [], 0, text.find(SCRATCH)
    while at >= 0:                  # the path around it, from its start to the end of the folder's name
        start = at
        while start > done and text[start - 1] not in _PATH_END:
            start -= 1
        stop = _NAME.match(text, at + len(SCRATCH)).end()
        if text.startswith("/work", stop) and (stop + 5 == len(text) or text[stop + 5] in "/" + _PATH_END):
            stop += 5
        parts += [text[done:start], "."]
        done, at = stop, text.find(SCRATCH, stop)
    text = "".join(parts) + text[done:]
    for path, shown in paths:
        text = text.replace(path, shown)
    return text


def _scrub_output(out, paths) -> None:
    for key in ("text", "evalue", "ename"):
        if isinstance(out.get(key), str):
            out[key] = scrub_paths(out[key], paths)
    if isinstance(out.get("traceback"), list):
        out["traceback"] = [scrub_paths(str(line), paths) for line in out["traceback"]]
    data = out.get("data")
    if isinstance(data, dict):
        for mime, value in data.items():
            if mime.startswith("text/") or mime in ("application/json",):
                if isinstance(value, str):
                    data[mime] = scrub_paths(value, paths)
                elif isinstance(value, list):
                    data[mime] = [scrub_paths(v, paths) if isinstance(v, str) else v for v in value]


#: a cell's metadata key for the feedback page's own notes on it (texts; the template shows them
#: after the cell's outputs, which the student's code made and which are shown through an allow-list)
NOTES = "kit_feedback_notes"
#: a cell tag the page keeps (nbconvert writes each as a class name, ``celltag_<tag>``)
TAG = re.compile(r"[A-Za-z0-9_-]{1,64}")


# ---------------------------------------------------------------- the run for feedback
def feedback_run_folder(graded: Path) -> Path:
    """Where the runs for feedback of the graded folder ``autograded/<student>/<lab>`` are kept."""
    graded = Path(graded)
    return graded.parent / f"{graded.name}.feedback-run"


def feedback_run_path(graded: Path) -> Path:
    """Where the run for feedback of ``autograded/<student>/<lab>/<nb>.ipynb`` is kept."""
    return feedback_run_folder(Path(graded).parent) / Path(graded).name


def _feedback_run(nb, resources):
    """The run for feedback of the notebook being converted, if it matches it cell by cell."""
    folder = resources.get("metadata", {}).get("path")
    name = resources.get("nbgrader", {}).get("notebook")
    if not folder or not name:
        return None
    path = feedback_run_path(Path(folder) / f"{name}.ipynb")
    try:
        run = nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return None

    def shape(book):
        return [(c.cell_type, c.metadata.get("nbgrader", {}).get("grade_id")) for c in book.cells]

    return run if shape(run) == shape(nb) else None


def prepare_for_feedback(nb, hide: HideHiddenTestsInFeedback):
    """A copy of a graded notebook without its hidden regions, outputs or execution counts."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if hide.begin_test_delimeter in cell.source:
            cell.source = hide.without_hidden(cell.source)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def run_for_feedback(graded: Path, out: Path, course: Path, timeout: int | None = None) -> None:
    """Run the graded notebook ``graded`` again without its hidden tests; write it to ``out``.

    The course's ``nbgrader_config.py`` sets the kernel's limits (``Execute``) and the output
    caps (``LimitOutputSize``); ``timeout`` (seconds per cell) overrides ``Execute.timeout``.
    With ``$LABS_SANDBOX`` set (``grade.py``), the kernel runs in the submission's sandbox.
    """
    from traitlets.config.loader import PyFileConfigLoader

    import grading_sandbox

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    if timeout:
        config.Execute.timeout = int(timeout)
    execute = {"kernel_manager_class": grading_sandbox.SandboxedKernelManager} if os.environ.get(grading_sandbox.ENV) else {}
    nb = prepare_for_feedback(nbformat.read(graded, as_version=4), HideHiddenTestsInFeedback(config=config))
    resources = {"metadata": {"path": str(Path(graded).parent)}}
    nb, resources = ExecuteRestartingDeadKernel(config=config, **execute).preprocess(nb, resources)
    nb, resources = LimitOutputSize(config=config).preprocess(nb, resources)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, out)


# ---------------------------------------------------------------- scores still to come
def is_pending(grade) -> bool:
    """A written answer that waits for the instructor: no automatic and no manual score yet.

    (nbgrader scores an answer left as released 0 by itself: that one is not pending.)
    """
    return grade.auto_score is None and grade.manual_score is None


class GetGradesMarkingPending(GetGrades):
    """``GetGrades``, and ``nbgrader.pending`` on every answer not graded yet.

    ``resources["nbgrader"]["pending"]``: the points of those answers.
    """

    def preprocess(self, nb, resources):
        resources.setdefault("nbgrader", {})["pending"] = 0.0
        nb, resources = super().preprocess(nb, resources)
        resources["nbgrader"]["pending"] = sum(float(c.metadata.nbgrader.get("points", 0)) for c in nb.cells
                                               if c.metadata.get("nbgrader", {}).get("pending"))
        return nb, resources

    def _get_score(self, cell, resources):
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        cell.metadata.nbgrader["pending"] = is_pending(grade)


# ---------------------------------------------------------------- math, offline
#: the MathJax 3 component put into every page (SVG output: no font files to load)
MATHJAX = "tex-svg-full.js"


@functools.cache
def mathjax_gzip_base64() -> str:
    """``MATHJAX`` of the installed ``django-static-mathjax``, gzip-compressed, base64."""
    return base64.b64encode(gzip.compress(_mathjax_path().read_bytes(), compresslevel=9, mtime=0)).decode("ascii")


def _mathjax_path() -> Path:
    from importlib import resources as importlib_resources

    return Path(str(importlib_resources.files("mathjax"))) / "static" / "mathjax" / "es5" / MATHJAX


@functools.cache
def mathjax_sha256() -> str:
    """The CSP source of ``MATHJAX``'s text, the script the page's unpacker makes (its text is the
    file's, an ASCII file: ``page_safety.script_hash``)."""
    from page_safety import script_hash

    return script_hash(_mathjax_path().read_bytes().decode("utf-8").encode("utf-8"))


class InlineMathJax(NbGraderPreprocessor):
    """Puts MathJax into the page's resources (``resources["kit_mathjax"]``, see the template) and
    the hash by which the page's Content Security Policy lets it run (``kit_mathjax_sha256``)."""

    display_data_priority = List().tag(config=True)  # set by the HTML exporter; unused here

    def preprocess(self, nb, resources):
        resources["kit_mathjax"] = mathjax_gzip_base64()
        resources["kit_mathjax_sha256"] = mathjax_sha256()
        return nb, resources


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Run a graded notebook again without its hidden tests "
                                     "(what its feedback page shows); grade.py runs this.")
    parser.add_argument("graded", type=Path, help="autograded/<student>/<lab>/<notebook>.ipynb")
    parser.add_argument("out", type=Path, help="where to write the run")
    parser.add_argument("--course", type=Path, default=Path.cwd(), help="the course folder (default: .)")
    parser.add_argument("--timeout", type=int, help="seconds per cell (default: Execute.timeout)")
    args = parser.parse_args()
    run_for_feedback(args.graded, args.out, args.course, args.timeout)
