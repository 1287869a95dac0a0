"""Stand-in for moto (not packaged by Debian 12): a test that needs a mocked
S3 fails here, under Mosaic and under Sluice alike."""


class _Unavailable:

    def __enter__(self):
        raise ModuleNotFoundError('moto is not installable here (stand-in from mosaic_suite/stubs)')

    def __exit__(self, *exc):
        return False


def mock_aws(*args, **kwargs):
    return _Unavailable()
