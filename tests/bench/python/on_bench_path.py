"""Imported first by the tests here: puts bench/python on sys.path, since the
benchmark scripts import each other as top-level modules. Not a conftest.py:
tests/bindings/python imports its own as the module `conftest`, which a
second one would shadow when pytest runs both folders."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..',
                                'bench', 'python'))
