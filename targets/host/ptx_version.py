"""The lowest PTX `.version` an emitted kernel needs.

NVRTC writes the newest ISA version it knows (NVRTC 13.5: 9.x) into every PTX file, and a
driver JIT-loads only PTX whose `.version` it knows, so PTX built by a new NVRTC would not
load on an older driver even when every instruction in it is old. `lower_ptx_version`
rewrites the line to `sku.ptx_version_for(target, families used)`, the families being read
off the instructions actually in the PTX (not the .cake file: the prelude's unused helpers
never reach the PTX, and the emitter may pick instructions the schedule does not name).
"""

from __future__ import annotations

import re

from cakec.targets.sku import get_sku, ptx_version_for

#: Instruction spellings in PTX → the family (targets/sku.py PTX_MIN_VERSION) they need.
_FAMILY_OF = (
    (r"\btcgen05\.ld\.red", "tcgen05_ld_red"),
    (r"\btcgen05\.", "tcgen05"),
    (r"\bwgmma\.", "wgmma"),
    (r"\bcp\.async\.bulk\.tensor\.\dd\.global", "tma_store"),
    (r"\bcp\.async\.bulk|\bprefetch\.tensormap", "tma"),
    (r"\bexpect_tx\b|\bmbarrier\.try_wait|\bfence\.mbarrier_init|\bfence\.proxy\.async",
     "mbarrier_tx"),
    (r"\bmbarrier\.", "mbarrier"),
    (r"\bsetmaxnreg\.", "setmaxnreg"),
    (r"\belect\.sync\b", "elect_sync"),
    (r"\bstmatrix\.", "stmatrix"),
    (r"\bldmatrix\.", "ldmatrix"),
    (r"\bcp\.async\.(ca|cg|commit_group|wait_group|wait_all|mbarrier)", "cp_async"),
    (r"\bmma\.sync\.aligned\.\S*kind::f8f6f4", "mma_sync_f8f6f4"),
    (r"\bmma\.sync\.aligned\.\S*\.e[45]m[23]\.", "mma_sync_fp8"),
    (r"\bmma\.sync\.", "mma_sync"),
    (r"\bbarrier\.cluster\.|%cluster_|\bmapa\.", "cluster"),
)
#: Syntax that is not an instruction family but still has a minimum version (PTX.md §2).
_SYNTAX = (
    (r"\.shared::(cta|cluster)\b", (7, 8)),  # state-space qualifiers
    (r"\bcvta\.param\b", (7, 7)),            # the address of a __grid_constant__ parameter
)
_VERSION = re.compile(r"^\.version\s+(\d+)\.(\d+)\s*$", re.MULTILINE)


def families_used(ptx: str) -> set[str]:
    return {family for pattern, family in _FAMILY_OF if re.search(pattern, ptx)}


def lowest_version(ptx: str, target: str) -> tuple[int, int]:
    """The `.version` this PTX needs on `target`: the target's minimum raised to every used
    family's and syntax's minimum."""
    needed = [ptx_version_for(get_sku(target), families_used(ptx))]
    needed += [v for pattern, v in _SYNTAX if re.search(pattern, ptx)]
    return max(needed)


def lower_ptx_version(ptx: bytes, target: str) -> bytes:
    """PTX with its `.version` line lowered to what it needs (never raised: a version NVRTC
    wrote that is already lower is kept)."""
    text = ptx.decode()
    m = _VERSION.search(text)
    if m is None:
        return ptx
    want = min(lowest_version(text, target), (int(m.group(1)), int(m.group(2))))
    return (text[:m.start()] + f".version {want[0]}.{want[1]}" + text[m.end():]).encode()
