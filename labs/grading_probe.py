"""The grader's check that a test cell ran as written (``grading_execute.ExecuteRestartingDeadKernel``).

Before and after each test cell the grader runs a probe of its own in the kernel (random nonces,
not stored in the history): it must fail its own ``assert`` with its message, print its nonce, and
find IPython's input and output machinery, the built-ins, ``numpy`` and ``math`` as they were when
the kernel started (the identities of their functions).  A test cell that also shows a result its
code does not compute, or clears its outputs, is suspect too.  Such a test scores 0 (an error
:data:`TAMPERED` first in its outputs).  The kernel is the student's: a probe written against this
one can still be fooled; it catches the generic ways (input or AST transformers, replaced hooks or
built-ins, patched numpy), and the submission's code is in plain view.
"""

from __future__ import annotations

import ast
import re
import secrets

import nbformat
from nbclient.exceptions import CellTimeoutError

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


class TamperingChecks:
    """The probe around each test cell, for an nbclient ``Execute`` (placed before it in the
    bases): :meth:`_run_checked` runs a cell as ``Execute.preprocess_cell`` does, checked.
    Expects ``check_tampering`` (a trait), and ``_results`` and ``_cleared`` kept by its
    ``execute_cell`` (results shown, outputs cleared, in the last cell run)."""

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
