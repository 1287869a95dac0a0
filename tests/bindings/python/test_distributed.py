"""sluice.distributed (served as streaming.base.distributed): the process's
place from torchrun's variables, and collectives that act only under an
initialized torch.distributed."""
import pytest

from sluice import distributed


def test_place_from_the_environment(monkeypatch):
    for name in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE'):
        monkeypatch.delenv(name, raising=False)
    assert (distributed.get_rank(), distributed.get_world_size(), distributed.get_local_rank(),
            distributed.get_local_world_size()) == (0, 1, 0, 1)
    monkeypatch.setenv('RANK', '3')
    monkeypatch.setenv('WORLD_SIZE', '4')
    monkeypatch.setenv('LOCAL_RANK', '1')
    monkeypatch.setenv('LOCAL_WORLD_SIZE', '2')
    assert (distributed.get_rank(), distributed.get_world_size(), distributed.get_local_rank(),
            distributed.get_local_world_size()) == (3, 4, 1, 2)


def test_collectives_without_torch_distributed(monkeypatch):
    monkeypatch.setenv('WORLD_SIZE', '1')
    distributed.barrier()  # nothing to wait for
    assert distributed.all_gather_object({'a': 1}) == [{'a': 1}]
    assert distributed.maybe_init_dist() is False
    monkeypatch.setenv('WORLD_SIZE', '2')
    with pytest.raises(RuntimeError, match=r'^The world_size\(2\) > 1, but the distributed '
                                           r'package is not available or has not been '
                                           r'initialized\.'):
        distributed.all_gather_object(5)
