import on_bench_path  # noqa: F401
import page_cache_write_cost as cost  # noqa: E402


def test_write_file_writes_every_block_once_whatever_the_threads(tmp_path):
    # 5 blocks over 1, 2 and 4 threads: parts of unequal size, none dropped.
    path = tmp_path / 'f.bin'
    for in_flight in (1, 2, 4):
        cost.write_file(str(path), 5 * cost.BLOCK, in_flight=in_flight)
        assert path.read_bytes() == b'\x5a' * (5 * cost.BLOCK)
        path.unlink()


def test_timed_gives_the_wall_and_system_seconds_of_the_call():
    import time
    wall, system, _ = cost.timed(lambda: time.sleep(0.05))
    assert wall >= 0.05
    assert 0 <= system < wall
