"""docs/engines.rst's table of the engines Sluice is tested with: every
release it names is a pin of the file that owns it, every test it names
exists, and every engine the engines stage installs without its
dependencies (oracle.txt, trainers.txt) has its row. Reads the sources
only."""
import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = (ROOT / 'docs' / 'engines.rst').read_text()
PIN_FILES = [ROOT / 'tests' / 'engines' / n for n in
             ('requirements.txt', 'constraints.txt', 'oracle.txt', 'trainers.txt')] + \
            [ROOT / 'bindings' / 'python' / n for n in ('wheel-tools.txt', 'build-constraints.txt')]


def pins(paths):
    """Every 'name==version' line of the files, comments dropped."""
    out = set()
    for path in paths:
        for line in path.read_text().splitlines():
            line = line.split('#', 1)[0].strip()
            if '==' in line:
                out.add(line)
    return out


def table():
    """The list-table's rows after its header, each as its cells' text."""
    body = PAGE[PAGE.index('.. list-table::'):].split('\n\n', 2)[1]
    rows = re.split(r'\n   \* - ', '\n' + body)[1:]
    return [re.split(r'\n     - ', row) for row in rows][1:]


def test_every_release_named_is_its_pin():
    named = {p for row in table() for p in re.findall(r'``([\w.\[\]-]+==[\w.]+)``', row[1])}
    assert len(named) > 15, named
    assert not named - pins(PIN_FILES), named - pins(PIN_FILES)


def test_every_test_named_exists():
    named = [t for row in table() for t in re.findall(r'``(tests/[\w/]+\.py)::(\w+)``', row[2])]
    assert len(named) > 20, named
    for path, name in named:
        tree = ast.parse((ROOT / path).read_text())
        functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert name in functions, f'docs/engines.rst names {path}::{name}, which does not exist'


def test_every_engine_installed_without_dependencies_has_its_row():
    engines = pins([ROOT / 'tests' / 'engines' / n for n in ('oracle.txt', 'trainers.txt')])
    named = {p for row in table() for p in re.findall(r'``([\w.\[\]-]+==[\w.]+)``', row[1])}
    assert engines and not engines - named, engines - named
