"""pytest plugin for run.sh: serves `streaming` from Sluice when asked
(MOSAIC_SUITE_ALIAS=1), and ends a test that runs past
MOSAIC_SUITE_TEST_TIMEOUT seconds (a hang must cost one test, not the run;
Debian has no pytest-timeout)."""
import os
import signal

import pytest

if os.environ.get('MOSAIC_SUITE_ALIAS') == '1':
    import sluice.streaming_alias  # noqa: F401  (installs the finder before conftest imports)

_TIMEOUT = int(os.environ.get('MOSAIC_SUITE_TEST_TIMEOUT', '300'))


class SuiteTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise SuiteTimeout(f'test ran past {_TIMEOUT} s (MOSAIC_SUITE_TEST_TIMEOUT)')


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(_TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
