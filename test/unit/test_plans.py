"""The library entries' plan cache (cakec/runtime/plans.py), with plain callables: a miss
goes to the first-call path, a kept plan serves its signature, unkeyable arguments go to the
first-call path (which checks them), the key choice follows the GPU count, eviction is
oldest first."""
from cakec.runtime import plans as P


def _cache(many: bool = False):
    seen: list[tuple] = []

    def first(*args):
        seen.append(args)
        cache.keep(args, lambda *a: ("plan", *a))
        return "first"
    cache = P.Plans(first, lambda x: (x,), lambda x: ("dev", x), lambda: many)
    return cache, seen


def test_a_kept_plan_serves_its_signature_and_a_miss_runs_the_first_call():
    cache, seen = _cache()
    assert [cache(1), cache(1), cache(2), cache(2)] == ["first", ("plan", 1), "first", ("plan", 2)]
    assert seen == [(1,), (2,)] and len(cache) == 2


def test_arguments_without_a_key_go_to_the_first_call():
    seen: list[tuple] = []

    def key(x):
        return (x.shape,)  # an int has no shape: the first call must see it

    cache = P.Plans(lambda *a: seen.append(a) or "checked", key, key, lambda: False)
    cache.keep((type("T", (), {"shape": 3})(),), lambda *a: "plan")
    assert cache(7) == "checked" and seen == [(7,)]


def test_the_key_with_devices_is_used_when_several_gpus_are_visible():
    cache, _ = _cache(many=True)
    cache(5)
    assert list(cache._plans) == [("dev", 5)]


def test_the_oldest_plan_is_dropped_beyond_the_bind_cache_size(monkeypatch):
    monkeypatch.setattr(P, "BIND_CACHE_SIZE", 2)
    cache, seen = _cache()
    for x in (1, 2, 3):
        cache(x)
    assert len(cache) == 2 and cache(1) == "first" and cache(3) == ("plan", 3)


def test_run_is_the_cache_as_a_plain_function():
    """`run` (what the entries call) and calling the cache are the same lookup."""
    cache, seen = _cache()
    run = cache.run
    assert [run(1), cache(1), run(1)] == ["first", ("plan", 1), ("plan", 1)] and seen == [(1,)]


def test_clear_forgets_every_plan_and_run_still_works():
    cache, seen = _cache()
    run = cache.run
    run(1)
    cache.clear()
    assert len(cache) == 0 and run(1) == "first" and run(1) == ("plan", 1) and seen == [(1,), (1,)]
