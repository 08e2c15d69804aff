"""cakec/collector.py: the young garbage-collection threshold while the compiler runs."""

from __future__ import annotations

import gc
import threading

from cakec.collector import YOUNG, fewer_collections
from cakec.driver import SourceFile


def _with_threshold(young: int):
    old = gc.get_threshold()
    gc.set_threshold(young, *old[1:])
    return old


def test_raised_inside_and_restored_after():
    old = _with_threshold(700)
    try:
        with fewer_collections():
            assert gc.get_threshold()[0] == YOUNG
            assert gc.get_threshold()[1:] == old[1:]
            with fewer_collections():  # nested: the outer call restores
                assert gc.get_threshold()[0] == YOUNG
            assert gc.get_threshold()[0] == YOUNG
        assert gc.get_threshold() == (700, *old[1:])
    finally:
        gc.set_threshold(*old)


def test_restored_after_an_exception():
    old = _with_threshold(700)
    try:
        try:
            with fewer_collections():
                raise ValueError("boom")
        except ValueError:
            pass
        assert gc.get_threshold()[0] == 700
    finally:
        gc.set_threshold(*old)


def test_a_threshold_of_zero_stays():  # 0: no automatic collections at all
    old = _with_threshold(0)
    started: list[str] = []
    gc.callbacks.append(lambda phase, info: started.append(phase))
    try:
        with fewer_collections():
            kept = [[] for _ in range(3 * 700)]
            assert gc.get_threshold()[0] == 0
        assert not started and len(kept) == 3 * 700
        assert gc.get_threshold()[0] == 0
    finally:
        gc.callbacks.pop()
        gc.set_threshold(*old)


def test_a_higher_threshold_stays():
    old = _with_threshold(YOUNG * 4)
    try:
        with fewer_collections():
            assert gc.get_threshold()[0] == YOUNG * 4
        assert gc.get_threshold()[0] == YOUNG * 4
    finally:
        gc.set_threshold(*old)


def test_overlapping_threads_restore_the_callers_threshold():
    old = _with_threshold(700)
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with fewer_collections():
            inside.set()
            leave.wait(5)

    try:
        t = threading.Thread(target=other)
        t.start()
        inside.wait(5)
        with fewer_collections():  # begins while the other thread's call runs
            leave.set()
            t.join(5)
            assert gc.get_threshold()[0] == YOUNG  # the other call ended first
        assert gc.get_threshold()[0] == 700
    finally:
        gc.set_threshold(*old)


def test_verify_source_compiles_under_it(monkeypatch):
    from cakec import driver

    seen: list[int] = []
    build = driver.build

    def recording(*args, **kwargs):
        seen.append(gc.get_threshold()[0])
        return build(*args, **kwargs)

    monkeypatch.setattr(driver, "build", recording)
    old = _with_threshold(700)
    try:
        comp = driver.verify_source(SourceFile("k.cake", "x = 1\n"))
        assert comp.sink.has_errors  # not a kernel
        assert seen == [YOUNG]
        assert gc.get_threshold()[0] == 700
    finally:
        gc.set_threshold(*old)


def test_the_due_young_collection_runs_before_the_call_returns():
    old = _with_threshold(700)
    was = gc.isenabled()
    gc.enable()
    started: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        with fewer_collections():
            kept = [[] for _ in range(3 * 700)]  # net allocations past the caller's threshold
            started.clear()  # fewer than YOUNG: nothing is collected inside
        assert started, "no collection when the call returned"
        assert len(kept) == 3 * 700
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*old)
        if not was:
            gc.disable()
