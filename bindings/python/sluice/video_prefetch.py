"""The download thread of StreamingOutsideDTWebVid (Mosaic's "DT"): while a
worker iterates, it walks the worker's planned sample ids ahead of the
consumer, reads each sample's 'content_path' through an engine handle of
its own (a handle serves one thread) and fetches that video into
extra_local, at most the dataset's `predownload` samples ahead, as
Mosaic's download thread does. A failure stops the thread; the consumer's
next sample raises Mosaic's RuntimeError, the failure chained."""
import threading

from sluice import engine
from sluice.download import CloudDownloader
from sluice.plan import Plan
from sluice.world import World

__all__ = ['VideoPrefetch']


class VideoPrefetch:
    """A context manager: on entry, starts the thread for the iteration that
    `dataset._begin_iteration()` just began (epoch, sample_in_epoch,
    worker of workers); on exit, stops it and waits for it. `finished` is
    set once the thread has ended (done, stopped or failed)."""

    def __init__(self, dataset, epoch, sample_in_epoch, worker, workers):
        world = World()
        _, _, state = dataset._resume(epoch)  # the resumed run's plan, as the engine's
        plan = Plan(dataset._config(world, workers, epoch, sample_in_epoch, state))
        self._ids = plan.worker_ids(world.node, world.rank_of_node, worker).tolist()
        self._dataset = dataset
        self._window = dataset.predownload
        self._consumed = 0
        self._stop = False
        self._error = None
        self._cond = threading.Condition()
        self.finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name='sluice-video-prefetch',
                                        daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join()
        return False

    def consume(self):
        """The consumer takes its next sample: raises if the thread failed,
        else lets it move one sample further."""
        if self._error is not None:
            raise RuntimeError('Background thread failed. Check other traceback.') \
                from self._error
        with self._cond:
            self._consumed += 1
            self._cond.notify_all()

    def _run(self):
        handle = downloader = None
        try:
            downloader = CloudDownloader.get(self._dataset.extra_remote)
            for pos, idx in enumerate(self._ids):
                with self._cond:
                    while not self._stop and pos >= self._consumed + self._window:
                        self._cond.wait()
                    if self._stop:
                        return
                if handle is None:
                    handle = engine.Engine(self._dataset._engine._config)
                rel_path = handle.get(int(idx))['content_path']
                self._dataset.fetch_video(downloader, rel_path)
        except BaseException as e:  # seen by the consumer's next sample
            self._error = e
        finally:
            if handle is not None:
                handle.close()
            if downloader is not None:
                downloader.clean_up()
            self.finished.set()
