"""Thread-block cluster geometry, shared by the passes and the emitter: a kernel's cluster
shape (`@cake.schedule(cluster=(x, y, z))`) and the multicast groups a `multicast=axes`
copy or arrival reaches.

A block's rank in its cluster is x + cx·(y + cy·z) (%cluster_ctarank). The group of a block
along axes A is every block whose coordinates differ from its own only along A; its members'
ranks are the group's base rank (the block's rank with its A coordinates zeroed) plus the
fixed `offsets`, so the ctaMask of a multicast is `pattern << base`.
"""

from __future__ import annotations

from itertools import product

from cakec.dialects.cake import KernelOp

#: Axis names in diagnostics: 0, 1, 2.
AXES = "xyz"


def cluster_shape(kernel: KernelOp) -> tuple[int, int, int] | None:
    """The kernel's cluster shape, None without `cluster=`."""
    if kernel.cluster is None:
        return None
    x, y, z = kernel.cluster.get_values()
    return int(x), int(y), int(z)


def cluster_size(kernel: KernelOp) -> int:
    """Blocks per cluster (1 without a cluster)."""
    shape = cluster_shape(kernel)
    return shape[0] * shape[1] * shape[2] if shape else 1


def strides(shape: tuple[int, int, int]) -> tuple[int, int, int]:
    """Rank stride of one step along each axis."""
    return 1, shape[0], shape[0] * shape[1]


def group_offsets(shape: tuple[int, int, int], axes: tuple[int, ...]) -> list[int]:
    """Rank offsets of a multicast group's members from its base, member 0 (the issuer)
    first: every combination of coordinates along `axes`, x fastest."""
    st = strides(shape)
    ranges = [range(shape[a]) for a in reversed(axes)]
    return sorted(sum(c * st[a] for c, a in zip(combo, reversed(axes)))
                  for combo in product(*ranges))


def group_size(shape: tuple[int, int, int], axes: tuple[int, ...]) -> int:
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def group_pattern(shape: tuple[int, int, int], axes: tuple[int, ...]) -> int:
    """The ctaMask of the group whose base rank is 0."""
    return sum(1 << off for off in group_offsets(shape, axes))


def multicast_axes(op: object) -> tuple[int, ...]:
    """An op's `multicast=` axes (empty when it has none)."""
    attr = getattr(op, "multicast", None)
    return tuple(int(a) for a in attr.get_values()) if attr is not None else ()


def fanout(kernel: KernelOp, op: object) -> int:
    """How many blocks' barriers one event of `op` reaches: its multicast group's size, or 1."""
    axes = multicast_axes(op)
    shape = cluster_shape(kernel)
    return group_size(shape, axes) if axes and shape else 1


def member_offset(index: str, shape: tuple[int, int, int], axes: tuple[int, ...]) -> str:
    """C expression for the rank offset of member `index` (a C expression) of a multicast
    group from its base: `index` in mixed radix over the group's axes (the first fastest),
    each digit times its axis's rank stride."""
    st, terms, radix = strides(shape), [], 1
    for a in axes:
        digit = index if radix == 1 else f"{index} / {radix}u"
        if radix * shape[a] < group_size(shape, axes):
            digit = f"({digit}) % {shape[a]}u"
        terms.append(digit if st[a] == 1 else f"({digit}) * {st[a]}u")
        radix *= shape[a]
    return " + ".join(terms) if len(terms) == 1 else "(" + " + ".join(terms) + ")"
