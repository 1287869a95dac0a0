import os

import pytest

# Tests send packets to 127.0.0.1 only: never the EC2 metadata address,
# even on a CI runner that is an EC2 instance (the AWS credential chain
# probes it when nothing else gives a credential).
os.environ['AWS_EC2_METADATA_DISABLED'] = 'true'

DATA = os.path.join(os.path.dirname(__file__), '..', '..', 'data', 'mosaic', 'mds')
DATA = os.path.normpath(DATA)


def compat_dirs():
    return sorted(d for d in os.listdir(DATA) if os.path.isdir(os.path.join(DATA, d)))


@pytest.fixture
def data_dir():
    return DATA
