import nbformat

from tests import notebook_outputs


def write(tmp_path, cells):
    nb = nbformat.v4.new_notebook(cells=cells)
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    return path


def test_clean_notebook_passes(tmp_path):
    cell = nbformat.v4.new_code_cell("1 + 1", execution_count=1,
                                     outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "2"},
                                                                     execution_count=1)])
    write(tmp_path, [nbformat.v4.new_markdown_cell("# t"), cell, nbformat.v4.new_code_cell("")])
    assert notebook_outputs.main([str(tmp_path)]) == 0


def test_error_output_and_unexecuted_cell_are_refused(tmp_path, capsys):
    err = nbformat.v4.new_code_cell("1/0", execution_count=1,
                                    outputs=[nbformat.v4.new_output("error", ename="ZeroDivisionError",
                                                                    evalue="division by zero", traceback=[])])
    write(tmp_path, [err, nbformat.v4.new_code_cell("x = 1")])
    assert notebook_outputs.main([str(tmp_path)]) == 1
    msgs = capsys.readouterr().err
    assert "ZeroDivisionError" in msgs and "not executed" in msgs


def test_stored_widget_state_is_refused(tmp_path, capsys):
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nbformat.write(nb, tmp_path / "w.ipynb")
    assert notebook_outputs.main([str(tmp_path)]) == 1
    assert "widget state" in capsys.readouterr().err


def test_the_book_and_the_labs_are_clean():
    assert notebook_outputs.main(["book", "labs/source"]) == 0


def test_strip_removes_widget_state_and_timestamps_but_not_outputs(tmp_path):
    cell = nbformat.v4.new_code_cell("1 + 1", execution_count=1,
                                     outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "2"},
                                                                     execution_count=1)])
    cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00Z"}
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nbformat.write(nb, tmp_path / "nb.ipynb")
    assert notebook_outputs.main(["--strip", str(tmp_path)]) == 0
    back = nbformat.read(tmp_path / "nb.ipynb", as_version=4)
    assert "widgets" not in back.metadata and "execution" not in back.cells[0].metadata
    assert back.cells[0].outputs[0]["data"]["text/plain"] == "2"
