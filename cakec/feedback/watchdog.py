"""The host half of watchdog builds (device half: targets/emit/watchdog.cuh): a host-mapped
log the stuck warps write into, armed on a loaded kernel, and the translation of its records
into diagnostics in the author's terms (role, barrier, stage, parity, .cake line): CAKE-R001.

The device stops the grid cooperatively (every wait polls an abort flag, then `exit`), so
the kernel ends, the CUDA context survives and the next launch in the same process works
once `reset` has cleared the flag. `reset` between launches of one kernel after it fired;
without it the next launch would leave at its first slow wait.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from cakec.diagnostics import Diagnostic, Note, Span

#: Words per record and of the header: CAKE_WD_RECORD_WORDS and struct CakeWdLog.
RECORD_WORDS = 16
HEADER_WORDS = 16
CAPACITY = 4096

HANG = "CAKE-R001"
NOT_STOPPED = "CAKE-R002"


@dataclass(frozen=True)
class Record:
    """One stuck (or stopped) warp, as the device wrote it."""

    block: int
    warp: int
    site: int
    stage: int
    parity: int
    seen: int
    waited_us: int
    expired: bool  # its own budget ran out (else it saw the abort flag while waiting)
    done_mask: int  # warps of its block whose role code had finished
    raw: int        # the mbarrier's 64-bit state word (opaque; for the curious)

    def to_json(self) -> dict:
        return {"block": self.block, "warp": self.warp, "site": self.site,
                "stage": self.stage, "parity": self.parity, "phases_seen": self.seen,
                "waited_us": self.waited_us, "expired": self.expired,
                "done_mask": self.done_mask, "mbarrier_state": hex(self.raw)}


class WatchdogLog:
    """The host-mapped log of one watchdog-built kernel, armed on its loaded module: the
    module's `cake_wd_log` points at the log, its abort flag is cleared."""

    def __init__(self, kernel: Any, device: int = 0, capacity: int = CAPACITY):
        from cakec.runtime.launch import _check, _drv

        drv = _drv()
        # Loading first makes the device's primary context current (host allocation needs it).
        fn = kernel._load(device).fn
        self.capacity = capacity
        self.nbytes = 4 * (HEADER_WORDS + capacity * RECORD_WORDS)
        flags = drv.CU_MEMHOSTALLOC_DEVICEMAP | drv.CU_MEMHOSTALLOC_PORTABLE
        self.host = int(_check(drv.cuMemHostAlloc(self.nbytes, flags), "cuMemHostAlloc"))
        self.device = int(_check(drv.cuMemHostGetDevicePointer(self.host, 0),
                                 "cuMemHostGetDevicePointer"))
        self.words = (ctypes.c_uint32 * (self.nbytes // 4)).from_address(self.host)
        mod = _check(drv.cuFuncGetModule(fn), "cuFuncGetModule")
        log_ptr, _ = _check(drv.cuModuleGetGlobal(mod, b"cake_wd_log"),
                            "cuModuleGetGlobal(cake_wd_log)")
        self.abort, _ = _check(drv.cuModuleGetGlobal(mod, b"cake_wd_abort"),
                               "cuModuleGetGlobal(cake_wd_abort)")
        value = ctypes.c_uint64(self.device)
        _check(drv.cuMemcpyHtoD(log_ptr, ctypes.addressof(value), 8), "cuMemcpyHtoD(cake_wd_log)")
        self.reset()

    def reset(self) -> None:
        """Empty the log and clear the abort flag (needed before a launch after one fired)."""
        from cakec.runtime.launch import _check, _drv

        ctypes.memset(self.host, 0, 4 * HEADER_WORDS)
        self.words[1] = self.capacity
        _check(_drv().cuMemsetD32(self.abort, 0, 1), "cuMemsetD32(cake_wd_abort)")
        _check(_drv().cuCtxSynchronize(), "cuCtxSynchronize")

    @property
    def fired(self) -> bool:
        return bool(self.words[2])

    def records(self) -> tuple[list[Record], int]:
        """(the records, how many were dropped for want of room)."""
        count = self.words[0]
        out = []
        for i in range(min(count, self.capacity)):
            w = self.words[HEADER_WORDS + i * RECORD_WORDS:HEADER_WORDS + (i + 1) * RECORD_WORDS]
            out.append(Record(w[0], w[1], w[2], w[3], w[4], w[5], w[6], bool(w[7]), w[8],
                              w[10] | (w[11] << 32)))
        return out, max(count - self.capacity, 0)

    def close(self) -> None:
        from cakec.runtime.launch import _drv

        _drv().cuMemFreeHost(self.host)


def _site_span(site: dict) -> Span | None:
    if site.get("file") is None:
        return None
    return Span(site["file"], site["line"], site["col"])


def _where(site: dict, stage: int) -> str:
    return site["barrier"] + (f"[{stage}]" if site["count"] > 1 else "")


def _warps(ws: list[int]) -> str:
    if len(ws) == 1:
        return f"warp {ws[0]}"
    if ws == list(range(ws[0], ws[-1] + 1)):
        return f"warps {ws[0]}-{ws[-1]}"
    return "warps " + ", ".join(map(str, ws))


def diagnostics(records: list[Record], table: dict, dropped: int = 0) -> list[Diagnostic]:
    """One CAKE-R001 per wait site whose budget ran out, with the first such warp named;
    notes for the producers' state in that block and the other warps still waiting."""
    sites, roles, budget = table["sites"], table["roles"], table["budget_ms"] / 1000.0
    # One record per (block, warp): lanes of a warp that diverged in the spin may each write.
    unique: dict[tuple[int, int], Record] = {}
    for r in records:
        if (r.block, r.warp) not in unique or r.expired:
            unique.setdefault((r.block, r.warp), r)
    by_site: dict[int, list[Record]] = {}
    for r in unique.values():
        by_site.setdefault(r.site, []).append(r)
    expired_sites = [s for s, rs in by_site.items() if any(r.expired for r in rs)]
    out = []
    for s in sorted(expired_sites, key=lambda s: min(r.block for r in by_site[s])):
        site = sites[s]
        rs = sorted(by_site[s], key=lambda r: (not r.expired, r.block, r.warp))
        first = rs[0]
        blocks = sorted({r.block for r in rs})
        msg = (f"hang: role {site['role']} (warp {first.warp}, block {first.block}) waited "
               f"> {budget:g} s on {_where(site, first.stage)} for parity {first.parity}; "
               f"this warp saw {first.seen} phase(s) of `{site['barrier']}` complete")
        producers = []
        for p in site["producers"]:
            working = roles.get(p, {}).get("working", [])
            done = bool(working) and all(first.done_mask >> w & 1 for w in working)
            waiting = [r for r in unique.values() if r.block == first.block and r.warp in
                       roles.get(p, {}).get("warps", [])]
            state = "had finished" if done else (
                f"was itself waiting at line {sites[waiting[0].site]['line']} on "
                f"{_where(sites[waiting[0].site], waiting[0].stage)}" if waiting
                else "had not finished")
            producers.append(f"its producer role {p} ({_warps(roles.get(p, {}).get('warps', []))})"
                             f" {state}")
        if producers:
            msg += "; " + "; ".join(producers)
        notes = [Note(None, f"{len(rs)} warp(s) in {len(blocks)} block(s) were stuck here "
                      f"(blocks {', '.join(map(str, blocks[:8]))}"
                      f"{', ...' if len(blocks) > 8 else ''})")]
        others = sorted({r.site for r in unique.values() if r.block == first.block} - {s})
        for o in others:
            r = next(r for r in unique.values() if r.block == first.block and r.site == o)
            notes.append(Note(_site_span(sites[o]),
                              f"role {sites[o]['role']} (warp {r.warp}) was waiting on "
                              f"{_where(sites[o], r.stage)} for parity {r.parity} "
                              f"({r.waited_us / 1e6:.2f} s) when the grid stopped"))
        if dropped:
            notes.append(Note(None, f"{dropped} more record(s) did not fit in the log"))
        out.append(Diagnostic(
            "error", HANG, msg, _site_span(site), notes,
            help="the phase this wait expects is never completed: compare the producer's trip "
                 "count, stage index and arrivals with the consumer's (`cakec verify` "
                 "explains rejected schedules; `cakec inspect` prints the derived parities)"))
    return out


def not_stopped(seconds: float, kernel: str, watchdog: bool) -> Diagnostic:
    """The kernel outlived the host's deadline: no watchdog, or a hang outside any lm.wait."""
    why = ("the watchdog did not stop it: the hang is not in an lm.wait" if watchdog else
           "it was built without the watchdog (`--no-watchdog`)")
    return Diagnostic("error", NOT_STOPPED, f"hang: {kernel} did not finish within "
                      f"{seconds:g} s and {why}; the CUDA context is unusable", None,
                      help="rerun with the watchdog (the default of `cakec run`) to learn "
                           "which wait is stuck")
