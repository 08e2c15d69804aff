"""CAKE-H023..H025: thread-block clusters against the target.

A kernel declares its cluster with `@cake.schedule(cluster=(x, y, z))`; `lm.cluster_rank()`,
`lm.cluster_sync()` and `multicast=` need one (the frontend says so, CAKE-T010). Here: the
target must have clusters and cakec must lower them for it (H023: sm_90a, sm_100a and sm_103a
share one lowering; sm_80/sm_89 have no clusters, and sm_120a/sm_121a's mma.sync backend
does not lower them), the cluster must fit the portable limit (H024: 8 blocks; the
non-portable 16 of sm_90a needs a launch attribute cakec does not set), and a constant grid
must be whole clusters (H025; a runtime grid is rounded up by the launch, docs/language.md).
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Operation

from cakec.dialects import cake
from cakec.passes.derive_common import const_int
from cakec.targets.cluster import AXES, cluster_shape
from cakec.targets.sku import Sku

#: Code-generation families whose backends lower clusters, multicast and remote arrivals.
LOWERED_FAMILIES = ("sm90", "sm100")
_LOWERED_TARGETS = "sm_90a, sm_100a or sm_103a"



def cluster_problems(kernel: cake.KernelOp, sku: Sku
                     ) -> Iterator[tuple[str, Operation, str, str]]:
    """(code, op, message, help) for each cluster problem of `kernel` on `sku`."""
    shape = cluster_shape(kernel)
    if shape is None:
        return
    if not sku.has("cluster"):
        yield ("H023", kernel, f"`cluster={shape}` needs thread-block clusters, which "
               f"{sku.name} does not have", f"target {_LOWERED_TARGETS}, or drop "
               "`cluster=` and its multicast copies")
        return
    if sku.codegen not in LOWERED_FAMILIES:
        yield ("H023", kernel, f"`cluster={shape}`: cakec does not lower thread-block clusters "
               f"for {sku.name} yet", f"target {_LOWERED_TARGETS}")
        return
    size = shape[0] * shape[1] * shape[2]
    if size > sku.max_cluster_size:
        yield ("H024", kernel, f"`cluster={shape}` has {size} blocks, more than the "
               f"{sku.max_cluster_size} of a portable cluster on {sku.name}",
               f"use at most {sku.max_cluster_size} blocks, e.g. `cluster=(2, 1, 1)`")
    grids = [op for op in kernel.body.block.ops if isinstance(op, cake.GridOp)]
    dims = list(grids[0].dims) if grids else []
    for axis, (value, c) in enumerate(zip(dims, shape)):
        n = const_int(value)
        if n is not None and n % c:
            yield ("H025", grids[0], f"the grid has {n} blocks along {AXES[axis]}, not a "
                   f"multiple of the cluster's {c}", f"launch {-(-n // c) * c} blocks along "
                   f"{AXES[axis]} (blocks past the work must find none), or a cluster that "
                   f"divides {n}")
    if not grids and shape != (1, 1, 1):
        yield ("H025", kernel, "a kernel without `lm.grid(...)` launches one block, less than "
               f"a cluster of {size}", "declare the grid with `lm.grid(...)` in whole clusters")
