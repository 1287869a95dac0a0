import os

import pytest

# Tests send packets to 127.0.0.1 only: never the EC2 metadata address,
# even on a CI runner that is an EC2 instance (the AWS credential chain
# probes it when nothing else gives a credential).
os.environ['AWS_EC2_METADATA_DISABLED'] = 'true'
# Databricks: no `databricks` program of the machine's (the databricks-cli
# strategy runs DATABRICKS_CLI_PATH, else the one on PATH), and no CI
# pipeline's or serving endpoint's identity (GitHub Actions, Azure DevOps,
# Model Serving) changes which strategy answers.
os.environ['DATABRICKS_CLI_PATH'] = '/nonexistent/databricks'
for _name in ('ACTIONS_ID_TOKEN_REQUEST_URL', 'ACTIONS_ID_TOKEN_REQUEST_TOKEN', 'SYSTEM_ACCESSTOKEN',
              'IS_IN_DB_MODEL_SERVING_ENV', 'IS_IN_DATABRICKS_MODEL_SERVING_ENV', 'SERVING_CREDENTIALS_DIR'):
    os.environ.pop(_name, None)

DATA = os.path.join(os.path.dirname(__file__), '..', '..', 'data', 'mosaic', 'mds')
DATA = os.path.normpath(DATA)


def compat_dirs():
    return sorted(d for d in os.listdir(DATA) if os.path.isdir(os.path.join(DATA, d)))


@pytest.fixture
def data_dir():
    return DATA
