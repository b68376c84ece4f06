"""tools/lint_module_size.py: production modules of at most 400 lines."""

import importlib.util
import os

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def lint():
    spec = importlib.util.spec_from_file_location(
        "lint_module_size", os.path.join(TOP, "tools", "lint_module_size.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module(path, lines, newline_at_end=True):
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join("x = %d" % n for n in range(lines))
    path.write_text(text + ("\n" if lines and newline_at_end else ""))
    return path


def test_the_tree_passes(lint, capsys):
    assert lint.check([os.path.join(TOP, p)
                       for p in lint.DEFAULT_PATHS]) == []
    assert lint.main([]) == 0
    assert capsys.readouterr().out == ""


def test_a_401_line_module_fails_naming_it(lint, tmp_path, capsys):
    package = tmp_path / "service"
    _module(package / "__init__.py", 0)
    _module(package / "small.py", 400)
    big = _module(package / "sub" / "big.py", 401)
    _module(package / "__pycache__" / "cached.py", 900)
    _module(package / "notes.txt", 900)
    assert lint.check([str(tmp_path)]) == [(str(big), 401)]
    assert lint.main([str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert out == "%s: 401 lines (at most 400)\n" % big
    assert "1 module(s) over 400 lines" in err


def test_lines_are_counted_as_wc_does(lint, tmp_path):
    assert lint.count_lines(_module(tmp_path / "a.py", 401)) == 401
    assert lint.count_lines(_module(tmp_path / "b.py", 401,
                                    newline_at_end=False)) == 401
    assert lint.count_lines(_module(tmp_path / "c.py", 0)) == 0
    # one file given by name is checked too
    assert lint.main([str(tmp_path / "b.py")]) == 1
    assert lint.main([str(tmp_path / "c.py")]) == 0


def test_offenders_are_listed_longest_first(lint, tmp_path):
    first = _module(tmp_path / "a.py", 450)
    second = _module(tmp_path / "b.py", 500)
    assert lint.check([str(tmp_path)]) == [(str(second), 500),
                                           (str(first), 450)]


def test_only_the_production_packages_are_checked(lint):
    assert set(lint.DEFAULT_PATHS) == {
        "ministack", "miniapi", "minicompute", "minicinder",
        "ministack_audit", "ministack_course"}
    assert lint.MAX_LINES == 400
