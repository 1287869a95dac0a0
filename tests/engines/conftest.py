"""The engines stage (tests/engines/run.sh): a real pyspark in local mode and
mosaicml-streaming from the registry, in the stage's own venv."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# The s3rver fixtures the package's own tests use (one owner).
sys.path.insert(0, os.path.join(HERE, '..', 'bindings', 'python'))

from s3rver_fixture import s3, s3rver  # noqa: E402,F401

if os.environ.get('SLUICE_ENGINES_EXPECT_WHEEL') == '1':
    # run.sh installed the wheel: the package and its engine must be the
    # venv's, or the stage would test the source tree instead.
    import sluice
    package = os.path.dirname(os.path.realpath(sluice.__file__))
    engine = os.path.realpath(sluice._lib.lib._name)
    site = os.path.realpath(sys.prefix)
    if not package.startswith(site + os.sep) or not engine.startswith(package + os.sep):
        raise RuntimeError(f'the engines stage tests the installed wheel, but sluice comes from '
                           f'{package} and its engine from {engine} (venv {site})')

os.environ['AWS_EC2_METADATA_DISABLED'] = 'true'
# Spark binds and names its driver on the loopback only, and its Python
# workers run this venv's interpreter (which sees sluice and streaming).
os.environ['SPARK_LOCAL_IP'] = '127.0.0.1'
os.environ['PYSPARK_PYTHON'] = sys.executable
os.environ['PYSPARK_DRIVER_PYTHON'] = sys.executable
# The workers unpickle the tests' own functions (a udf_iterable) by module name.
os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, [HERE, os.environ.get('PYTHONPATH')]))


class SparkSessions:
    """Fresh SparkSessions (local[4]) in one JVM. A fresh SparkContext numbers
    its tasks from 0 again, and dataframe_to_mds names each partition's folder
    by its task attempt id (as Mosaic does): two writers compared byte for
    byte each start from a fresh context and run the same jobs."""

    def __init__(self):
        self.session = None

    def fresh(self):
        from pyspark.sql import SparkSession
        if self.session is not None:
            self.session.stop()
        builder = SparkSession.builder
        # The Python workers' environment is the JVM's (fixed when the first
        # session started) plus these: what the s3 fixture sets.
        for name in ('AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'S3_ENDPOINT_URL'):
            if name in os.environ:
                builder = builder.config('spark.executorEnv.' + name, os.environ[name])
        self.session = (builder.master('local[4]')
                        .appName('sluice-engines')
                        .config('spark.ui.enabled', 'false')
                        .config('spark.driver.host', '127.0.0.1')
                        .config('spark.driver.bindAddress', '127.0.0.1')
                        .config('spark.sql.shuffle.partitions', '4')
                        # Several Arrow batches per partition reach the writers.
                        .config('spark.sql.execution.arrow.maxRecordsPerBatch', '7')
                        .getOrCreate())
        self.session.sparkContext.setLogLevel('ERROR')
        return self.session

    def current(self):
        """The session running, or a fresh one: for a test that compares
        nothing by task ids."""
        return self.session if self.session is not None else self.fresh()

    def stop(self):
        if self.session is not None:
            self.session.stop()
            self.session = None


@pytest.fixture(scope='session')
def spark_sessions():
    sessions = SparkSessions()
    yield sessions
    sessions.stop()
