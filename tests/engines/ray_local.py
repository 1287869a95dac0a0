"""A local Ray for the Ray tests (test_ray_train.py, test_ray_data.py):
started on this machine only, its sessions in a folder of its own."""
import contextlib
import os
import secrets
import shutil
import tempfile

import pytest

# One token for every Ray this process starts: Ray keeps the first it reads,
# and a second ray.init with a new one fails to reach its own GCS
# (InvalidAuthToken).
_AUTH_TOKEN = secrets.token_hex(32)


@contextlib.contextmanager
def started(env=None):
    """ray.init on the loopback, with `env` (name -> value) set first, so that
    Ray's worker processes, which take the environment of the first
    ray.init, see it too. Nothing Ray starts connects past the loopback
    (checked with strace -e connect when this was written)."""
    with pytest.MonkeyPatch.context() as mp:
        # Ray otherwise takes the address of the route to the internet as the
        # node's IP, and Ray Train hands it to torch as MASTER_ADDR; switched
        # off, ray.util.get_node_ip_address() is 127.0.0.1 (the switch's name
        # says Windows and macOS, where it is off by default).
        mp.setenv('RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER', '0')
        mp.setenv('RAY_USAGE_STATS_ENABLED', '0')
        # ray.init starts its dashboard process even with include_dashboard=False
        # (with the usage-stats module alone), which asks the cloud metadata
        # endpoints which cloud this is, whatever RAY_USAGE_STATS_ENABLED says.
        # Through a proxy on a closed loopback port those requests fail at once.
        mp.setenv('HTTP_PROXY', 'http://127.0.0.1:9')
        mp.setenv('NO_PROXY', '127.0.0.1,localhost')
        # torch.distributed's gloo (which Ray Train sets up) on the loopback too.
        mp.setenv('GLOO_SOCKET_IFNAME', 'lo')
        # Ray's token authentication with a token of the tests', which Ray would
        # otherwise make and keep in ~/.ray.
        mp.setenv('RAY_AUTH_TOKEN', _AUTH_TOKEN)
        # Ray Train's controller asks its workers whether they are done every
        # 2 s by default: a few seconds of a test's wall time.
        mp.setenv('RAY_TRAIN_HEALTH_CHECK_INTERVAL_S', '0.2')
        for name, value in (env or {}).items():
            mp.setenv(name, value)
        import ray  # reads the switch above when first imported

        # Ray's sessions (logs, sockets) in a folder of the test's, not in the
        # shared /tmp/ray; short, for the sockets' path limit.
        temp = tempfile.mkdtemp(prefix='ray-')
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=temp)
        try:
            # Not so if something imported ray before this.
            assert ray.util.get_node_ip_address() == '127.0.0.1'
            yield ray
        finally:
            ray.shutdown()
            shutil.rmtree(temp, ignore_errors=True)
