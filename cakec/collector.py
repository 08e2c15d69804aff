"""Fewer young collections of Python's cyclic garbage collector while the compiler runs.

A verify allocates some 10⁵ container objects (events, vector clocks, IR, syntax nodes), most
of them freed by their reference counts within the same verify. At CPython's default
threshold (a young collection every 700 net allocations) the collector walks the young
objects about ten times per verify of the GEMM example and every generation about once per
ten verifies, the whole heap included (in a served or in-process search loop, the ~10⁶
objects of the compiler's own start-up): 2–3 ms of a 23 ms verify, over a loop of verifies
(2026-12-05, docs/serve.md's speed log). `fewer_collections()` raises the young threshold for
its duration, restores it after and then runs the collection that is due: the
collector still runs under its own policy (every `YOUNG` allocations inside the compiler,
the older generations as their counts come due) and its cost stays with the call, but it
walks each object less often. The CLI (cakec/__main__.py) keeps its own, stronger policy for
a one-shot process.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

#: Net container allocations between young collections while the compiler runs
YOUNG = 10_000

_lock = threading.Lock()
_depth = 0  # compiler calls running (threads, nesting): the outermost restores
_saved: tuple[int, ...] = ()


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Young collections every `YOUNG` allocations, not CPython's 700, while the block runs
    (a threshold the process set higher, or to 0, stays)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            if 0 < _saved[0] < YOUNG:  # 0: the process turned automatic collection off
                gc.set_threshold(YOUNG, *_saved[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            last = _depth == 0
            if last:
                gc.set_threshold(*_saved)
        # The collection the compiler's allocations made due runs here, not at the caller's
        # next allocation, so that its cost stays with the call: the generation CPython would
        # collect then, but the oldest (its heuristic for that one is not exposed: its next
        # automatic collection decides). Outside the lock: a finalizer may compile again.
        if last and gc.isenabled() and _saved[0] > 0:
            gc.get_count()  # its tuple may be the allocation that runs CPython's own collection
            counts = gc.get_count()  # what is still due after it
            if counts[0] > _saved[0]:
                gc.collect(1 if counts[1] > _saved[1] else 0)
