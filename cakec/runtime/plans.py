"""Plans per argument signature: the steady state of the library entries (cakec.kernels.gemm,
kmeans_assign). A plan is the call of one argument signature with its checks, route choice
and kernel bindings done when that signature was first seen (they depend on nothing else),
so a repeated call is one key, one dict lookup and the plan. Torch-free: the entries give
the keys and the first-call path."""
from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar

from cakec.runtime.launch import BIND_CACHE_SIZE

#: Streams a plan keeps kernel bindings for (it starts over beyond this many).
STREAMS = 16

R = TypeVar("R")
Key = Callable[..., tuple]


class Plans(Generic[R]):
    """`plans(*args)` runs the plan of args' signature, else `first(*args)` (which checks
    everything and may `keep` a plan). The key is `key_one`, or `key_many` (the devices
    too) when `many()` says several GPUs are visible, decided on the first `keep`."""

    def __init__(self, first: Callable[..., R], key_one: Key, key_many: Key,
                 many: Callable[[], bool]) -> None:
        self._first, self._key_one, self._key_many, self._many = first, key_one, key_many, many
        self._chosen = False                 # whether the first `keep` chose the key
        self._key: list[Key] = [key_one]     # the key in use, in a cell `run` reads
        self._plans: dict[tuple, Callable[..., R]] = {}
        #: The steady-state call as one closure (what the entries call): no method dispatch
        #: and no attribute lookups on the cache, 0.2 µs a call less than `__call__` on a
        #: 2-core CPU host (bench/launch_overhead.py times the entries).
        self.run: Callable[..., R] = self._runner()

    def __len__(self) -> int:
        return len(self._plans)

    def clear(self) -> None:
        """Forget every plan (the next call of each signature runs `first` again): after the
        route table changed, say."""
        self._plans.clear()

    def __call__(self, *args: Any) -> R:
        return self.run(*args)

    def _runner(self) -> Callable[..., R]:
        get, first, key = self._plans.get, self._first, self._key

        def run(*args: Any) -> R:
            try:
                fn = get(key[0](*args))
            except Exception:  # noqa: BLE001 - not tensors: `first` checks and says what is wrong
                fn = None
            return first(*args) if fn is None else fn(*args)
        return run

    def keep(self, args: tuple, fn: Callable[..., R]) -> None:
        """Keep `fn` as the plan of args' signature, oldest dropped first beyond the runtime's
        bind-cache size."""
        if not self._chosen:
            self._chosen = True
            self._key[0] = self._key_many if self._many() else self._key_one
        if len(self._plans) >= BIND_CACHE_SIZE:
            del self._plans[next(iter(self._plans))]
        self._plans[self._key[0](*args)] = fn
