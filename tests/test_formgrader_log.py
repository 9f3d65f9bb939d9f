"""The check that reads a Formgrader's log for server errors finds them, and only them."""

from tests.formgrader import server_errors

ERROR = "[E 2026-11-29 00:12:31.120 ServerApp] 500 GET /formgrader/manage_submissions/lab1 (127.0.0.1) 41.20ms"
QUIET = """[I 2026-11-29 00:12:25.500 ServerApp] jupyterlab | extension was successfully loaded.
[W 2026-11-29 00:12:30.353 ServerApp] 404 GET /favicon.ico (127.0.0.1) 1.50ms
[I 2026-11-29 00:12:28.060 ServerApp] http://127.0.0.1:45015/?token=...
[C 2026-11-29 00:12:29.500 ServerApp] Unwritable directory, please contact your instructor"""


def test_a_time_stamp_or_a_client_error_is_no_server_error():
    assert server_errors(QUIET) == []


def test_a_5xx_answer_a_traceback_and_a_missing_template_are_found():
    said = "\n".join([QUIET, ERROR, "Traceback (most recent call last):", "jinja2.exceptions.TemplateNotFound: x"])
    assert server_errors(said) == [ERROR, "Traceback (most recent call last):", "jinja2.exceptions.TemplateNotFound: x"]
    assert server_errors(said, tracebacks=False) == [ERROR]
