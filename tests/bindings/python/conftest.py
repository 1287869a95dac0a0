import os

import pytest

DATA = os.path.join(os.path.dirname(__file__), '..', '..', 'data', 'mosaic', 'mds')
DATA = os.path.normpath(DATA)


def compat_dirs():
    return sorted(d for d in os.listdir(DATA) if os.path.isdir(os.path.join(DATA, d)))


@pytest.fixture
def data_dir():
    return DATA
