"""corpus.heap: freed numpy arrays held by glibc's arenas go back to the system when asked."""

import sys
import threading

import numpy as np
import pytest

from corpus.heap import release_free_heap


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        return int(fh.read().split("VmRSS:")[1].split()[0]) / 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_free_arrays_of_a_thread_leave_the_process_when_the_heap_is_released():
    if not release_free_heap():
        pytest.skip("not glibc")
    kept = []

    def work():
        big = np.ones(16 << 20, np.uint8)  # freed: glibc now carves arrays up to 16 MB from its arena
        del big
        arrays = [np.ones(4 << 20, np.uint8) for _ in range(60)]  # 240 MB, touched
        kept.append(arrays.pop())  # the last one pins the arena's top: no automatic trim
        del arrays

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    before = _rss_mb()
    assert release_free_heap()
    after = _rss_mb()
    assert before - after > 150, (before, after)  # without the release the 236 MB stay resident
