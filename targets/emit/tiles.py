"""Register-tile lowering shared by every backend: the element expression evaluator, the
rule for when a tile value is kept in registers, and the layout-neutral lowerings
(materialised values, row reductions, assignments to `lm.regs` tiles, stores of whole
tiles), each given the role's `Layout` from its backend (targets/sm80, sm90, sm100).

A pure tile op (arithmetic, functions, comparisons, `lm.where`, index tiles) emits nothing
when its only consumer follows it with nothing but pure ops in between: the consumer
evaluates the expression per register, so `c_sq - 2.0 * acc` costs one FMA per element and
`(acc + bias).to(lm.bf16)` is converted as it is stored. Any other value is computed once,
where it stands, into registers of the layout (its readers may follow a write of a tile it
reads, such as `m_i = lm.max(m_i, ...)`); ptxas keeps in registers only what is live.

Loops over a thread's registers use `cake_r` (row slot) and `cake_c` (column slot), fully
unrolled: every array index is a constant after unrolling."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from weakref import WeakKeyDictionary

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation, SSAValue

from cakec.dialects.cake import (
    PURE_TILE_OPS, ConvertOp, StageLoadOp, StageOp, SumSqOp, TileAnyOp, TileAssignOp,
    tile_leaves,
    TileBinaryOp, TileCmpOp, TileIndexOp, TileLoadOp, TileReduceOp, TileSelectOp,
    SplitStoreOp, StageStoreOp, TileStoreOp, TileType, TileUnaryOp, TmaStoreOp, ViewOp,
    dtype_bytes, dtype_name,
)
from cakec.targets.emit.cexpr import paren, scaled, unparen
from cakec.targets.emit.common import OUT_TRAITS
from cakec.targets.emit.emitter import KernelEmitter, RoleState
from cakec.targets.emit.unsupported import Unsupported
from cakec.targets.sku import SWIZZLE_SPAN

_CTYPE = {"f32": "float", "i32": "i32", "i1": "bool"}
_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "and": "&&", "or": "||"}
_CALL2 = {"min": "fminf", "max": "fmaxf"}
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
#: Element functions: device helpers of targets/emit/tiles.cuh, each one PTX instruction
#: (or a short fixed sequence of them), all forced inline.
_UNARY = {"exp2": "cake_ex2", "exp": "cake_exp", "log2": "cake_lg2", "log": "cake_log",
          "sqrt": "cake_sqrt", "rsqrt": "cake_rsqrt", "abs": "fabsf", "tanh": "cake_tanh",
          "sigmoid": "cake_sigmoid", "gelu": "cake_gelu", "silu": "cake_silu"}
#: 16-bit register tiles (`lm.regs` of bf16/f16 assigned `(...).to(dtype)`), held two
#: adjacent columns per u32, and the trait that reads and writes their halves.
PACKED = {"bf16": "CakeOutBf16", "f16": "CakeOutF16"}

#: Loop variables of a thread's registers: row slot, column slot, pair start.
R, C, CP = "cake_r", "cake_c", "cake_cp"
#: A target's tile layout for `evaluate`: the C expression of one element of a leaf tile.
Leaf = Callable[[KernelEmitter, SSAValue], str]


class Layout:
    """Which elements of the role's tiles a thread holds (one subclass per target family).

    A thread holds `row_slots(M)` rows and `col_slots(N)` columns of an (M, N) tile; an
    (M, 1) vector has one register per row slot, a (1, N) one per column slot. Column slots
    v k, ..., v k + v − 1 (v = `vector`, at least 2) are adjacent columns: loads and stores
    of 4-byte elements move them in one access when the block allows it, and 2k, 2k + 1
    always form a pair."""

    #: Column slots per run of adjacent columns (one 8- or 16-byte access of f32/i32).
    vector: int = 2

    #: xor masks of the lanes that hold the other columns of a thread's rows
    #: (shfl.bfly partners of a row reduction), empty when a thread owns whole rows.
    row_lanes: tuple[int, ...] = ()

    #: xor masks of the lanes that hold the other rows of a thread's columns (shfl.bfly
    #: partners of a column reduction, before the warps are combined).
    col_lanes: tuple[int, ...] = ()

    def row_warps(self) -> tuple[int, str]:
        """(how many warps of the role hold other rows of this warp's columns, this warp's
        index among them): a column reduction combines their partial results in SMEM."""
        raise Unsupported("a column reduction (`axis=0`) in this tile layout")

    def row_slots(self, rows: int) -> int:
        raise NotImplementedError

    def col_slots(self, cols: int) -> int:
        raise NotImplementedError

    def decl(self, shape: tuple[int, int]) -> str:
        """The C array dimensions of a tile of `shape` in this layout."""
        raise NotImplementedError

    def ref(self, var: str, shape: tuple[int, int]) -> str:
        """The element of array `var` (a tile of `shape`) at (cake_r, cake_c)."""
        raise NotImplementedError

    def decl_packed(self, shape: tuple[int, int]) -> str:
        """The u32 array dimensions of a 16-bit (M, N) tile held two columns per register
        (column slots 2k and 2k + 1 share register k)."""
        raise Unsupported("a 16-bit register tile in this layout")

    def ref_packed(self, var: str, shape: tuple[int, int]) -> str:
        """The packed register of array `var` holding the element at (cake_r, cake_c) (its
        half: cake_c % 2)."""
        raise Unsupported("a 16-bit register tile in this layout")

    def row(self) -> str:
        """The tile row of row slot cake_r (a C expression)."""
        raise NotImplementedError

    def col(self) -> str:
        """The tile column of column slot cake_c."""
        raise NotImplementedError

    def leaf(self, em: KernelEmitter, v: SSAValue) -> str | None:
        """The element of a tile only the target knows (an accumulator, a TMEM chunk)."""
        return None

    def writes_row(self) -> str:
        """Whether this thread writes its rows' values when an (M, 1) vector is stored (one
        thread per row)."""
        return "cake_lane_id() % 4u == 0u" if self.row_lanes else "true"

    def before_read(self, em: KernelEmitter, reader: Operation, v: SSAValue) -> None:
        """Make the registers the expression `v` reads ready (an MMA's wait)."""

    def before_write(self, em: KernelEmitter, store: Operation, view: SSAValue) -> None:
        """Make sure none of the role's own asynchronous reads of `view` is still in flight
        when `store` overwrites a stage of it (sm_90a: wgmma groups)."""

    @contextmanager
    def row_loop(self, em: KernelEmitter, rows: int) -> Iterator[None]:
        with _loop(em, R, self.row_slots(rows)):
            yield

    @contextmanager
    def col_loop(self, em: KernelEmitter, v: SSAValue, step: int = 1) -> Iterator[None]:
        """Columns of the expression `v`: cake_c, or with a `step` n > 1 cake_cp = 0, n,
        2n, ... (pairs, or runs of n adjacent column slots)."""
        n = self.col_slots(tile_dims(v)[1])
        with _loop(em, CP, n, step=step) if step > 1 else _loop(em, C, n):
            yield

    @contextmanager
    def loops(self, em: KernelEmitter, shape: tuple[int, int], v: SSAValue) -> Iterator[None]:
        """Every register of a tile of `shape` (the expression `v`)."""
        with (self.row_loop(em, shape[0]) if shape[0] > 1 else _nothing()):
            with (self.col_loop(em, v) if shape[1] > 1 else _nothing()):
                yield


@contextmanager
def _nothing() -> Iterator[None]:
    yield


@contextmanager
def _loop(em: KernelEmitter, var: str, n: int, step: int = 1) -> Iterator[None]:
    em.line("#pragma unroll")
    with em.block(f"for (int {var} = 0; {var} < {n}; {var} += {step})" if step != 1
                  else f"for (int {var} = 0; {var} < {n}; ++{var})"):
        yield


def tile_role(em: KernelEmitter) -> RoleState:
    if em.role is None:
        raise Unsupported("a register tile outside a role")
    return em.role


def tile_heights(role: RoleState) -> frozenset[int]:
    """The row counts of the role's 2-D register tiles (1 for (1, N) vectors): each family
    lays a role's tiles out over one row count."""
    if role.heights is None or role.heights[0] is not role.ops:
        role.heights = (role.ops, frozenset(
            d[0] for op in role.ops for r in (*op.results, *op.operands)
            if isinstance(r.type, TileType) for d in [r.type.dims()] if len(d) == 2))
    return role.heights[1]


def tile_dims(v: SSAValue) -> tuple[int, int]:
    dims = v.type.dims()  # type: ignore[attr-defined]
    if len(dims) != 2:
        raise Unsupported(f"a rank-{len(dims)} register tile")
    return dims[0], dims[1]


def tile_ctype(v: SSAValue) -> str:
    name = dtype_name(v.type.element_type)  # type: ignore[attr-defined]
    if name not in _CTYPE:
        raise Unsupported(f"a {name} register tile")
    return _CTYPE[name]


def tile_ctype_loaded(v: SSAValue) -> str:
    """The C type of a loaded tile's registers: 16-bit floats are widened to f32 as read."""
    name = dtype_name(v.type.element_type)  # type: ignore[attr-defined]
    return "float" if name in ("bf16", "f16") else tile_ctype(v)


def layout_of(em: KernelEmitter) -> Layout:
    hook = em.backend.tile_layout if em.backend is not None else None
    if hook is None:
        raise Unsupported("register-tile arithmetic")
    return hook(em)


# ---- the evaluator ----------------------------------------------------------------------------


def evaluate(em: KernelEmitter, v: SSAValue, leaf: Leaf) -> str:
    """C expression for one element of the tile expression `v`: constants, scalars and
    the pure ops here (target-neutral), every other tile through `leaf`, the target's
    register layout."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return float_literal(owner.value.value.data)
    if not isinstance(v.type, TileType):
        return em.val(v)  # a runtime scalar or an integer constant
    if v in em.values or isinstance(owner, TileIndexOp):
        return leaf(em, v)
    if isinstance(owner, TileBinaryOp):
        kind = owner.kind.data
        if kind in _CALL2:
            call = _CALL2[kind] if tile_ctype(v) == "float" else kind  # i32: CUDA's min/max
            return f"{call}({evaluate(em, owner.lhs, leaf)}, {evaluate(em, owner.rhs, leaf)})"
        return _fused(em, owner, leaf) or "({} {} {})".format(
            evaluate(em, owner.lhs, leaf), _INFIX[kind], evaluate(em, owner.rhs, leaf))
    if isinstance(owner, TileUnaryOp):
        x, kind = evaluate(em, owner.operand, leaf), owner.kind.data
        if kind == "neg":
            return f"(-{paren(x)})"
        if kind == "relu":
            return f"fmaxf({x}, 0.0f)"
        return f"{_UNARY[kind]}({x})"
    if isinstance(owner, TileCmpOp):
        return "({} {} {})".format(evaluate(em, owner.lhs, leaf), _CMP[owner.predicate.data],
                                   evaluate(em, owner.rhs, leaf))
    if isinstance(owner, TileSelectOp):
        return "({} ? {} : {})".format(*(evaluate(em, o, leaf) for o in owner.operands))
    if isinstance(owner, ConvertOp) and isinstance(owner.source.type, TileType) and \
            tile_ctype(v) in ("float", "i32"):
        return f"(({tile_ctype(v)}){evaluate(em, owner.source, leaf)})"
    return leaf(em, v)


def _fused(em: KernelEmitter, op: TileBinaryOp, leaf: Leaf) -> str | None:
    """`x ± y * z` as one fmaf. Written out, `c_sq - 2.0 * acc` compiles to two FADDs (the
    compiler turns the exact doubling into an add and will not contract it): one more
    instruction per score element, 1/8 of the MMA time at D = 128."""
    kind = op.kind.data
    if kind == "sub":
        candidates = [(op.rhs, op.lhs, "-")]
    elif kind == "add":
        candidates = [(op.rhs, op.lhs, ""), (op.lhs, op.rhs, "")]
    else:
        return None
    for product, other, sign in candidates:
        mul = product.owner
        if isinstance(mul, TileBinaryOp) and mul.kind.data == "mul" and product not in em.values:
            y, z = evaluate(em, mul.lhs, leaf), evaluate(em, mul.rhs, leaf)
            return f"fmaf({sign}{paren(y)}, {z}, {evaluate(em, other, leaf)})"
    return None


def float_literal(x: float) -> str:
    if math.isinf(x):
        return ("-" if x < 0 else "") + "__int_as_float(0x7f800000)"
    return f"{x!r}f"


def element(em: KernelEmitter, v: SSAValue, layout: Layout) -> str:
    """The element of `v` at the current (cake_r, cake_c) in `layout`."""

    def leaf(em: KernelEmitter, x: SSAValue) -> str:
        owner = x.owner
        if isinstance(owner, TileIndexOp):
            pos = layout.row() if owner.axis.value.data == 0 else layout.col()
            return f"({paren(em.val(owner.base))} + {pos})"
        special = layout.leaf(em, x)
        if special is not None:
            return special
        if x in em.values:
            # A 16-bit load is widened to f32 registers as it is read; other 16-bit tiles pack.
            trait = None if isinstance(owner, TileLoadOp) else PACKED.get(
                dtype_name(x.type.element_type))  # type: ignore[attr-defined]
            if trait is not None:
                return f"{trait}::get({layout.ref_packed(em.values[x], tile_dims(x))}, {C} % 2)"
            return layout.ref(em.values[x], tile_dims(x))
        if isinstance(owner, TileLoadOp) and deferred_load(owner):
            return _load_elem(em, owner, layout)
        raise em.undefined(x, f"a tile defined by `{getattr(owner, 'name', 'a block')}` in "
                           "tile arithmetic")

    return evaluate(em, v, leaf)


def declare_regs(em: KernelEmitter, ops: list[Operation], layout: Layout) -> None:
    """The `lm.regs` tiles the role's code reads or assigns that are not MMA accumulators
    (a running max, a running sum), in the role's layout, before its code."""
    for op in ops:
        for v in op.operands:
            regs = v.owner
            if (v in em.values or not isinstance(v.type, TileType)
                    or getattr(regs, "name", None) != "cake.regs" or layout.leaf(em, v) is not None):
                continue
            rows, cols = tile_dims(v)
            packed = dtype_name(v.type.element_type) in PACKED  # type: ignore[attr-defined]
            decl = (f"u32 {{}}{layout.decl_packed((rows, cols))}" if packed
                    else f"{tile_ctype(v)} {{}}{layout.decl((rows, cols))}")
            var = em.names.fresh(regs.sym_name.data)  # type: ignore[union-attr]
            em.values[v] = var
            em.source_comment(regs)  # type: ignore[arg-type]
            em.line(decl.format(var) + f";  // ({rows}, {cols}) lm.regs" +
                    (", 16-bit pairs" if packed else ""))


# ---- lowerings --------------------------------------------------------------------------------


def inlined(op: Operation) -> bool:
    """Whether the consumer evaluates this pure op: its one use follows in the same block
    with only pure ops, loads (or scalar arithmetic) in between, so nothing it reads can
    change."""
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return False
    user = uses[0].operation
    return user.parent is op.parent and _registers_kept(op, user)


def _registers_kept(op: Operation, user: Operation) -> bool:
    """Whether `user` follows `op` in its block with only ops between that leave every
    register and memory as they are (`_leaves_registers`)."""
    between = op.next_op
    while between is not None and between is not user:
        if not _leaves_registers(between):
            return False
        between = between.next_op
    return between is user


def _leaves_registers(op: Operation) -> bool:
    """Whether `op` writes no register an expression could read and no memory: pure tile
    ops, `.to`, scalar arithmetic, and tile loads (which only fill registers of their own)."""
    return (isinstance(op, (*PURE_TILE_OPS, ConvertOp, TileLoadOp))
            or op.dialect_name() == "arith")


def pure_tile(em: KernelEmitter, op: Operation) -> None:
    """A pure tile op: nothing when inlined into its consumer, else its registers."""
    if inlined(op):
        return
    v = op.results[0]
    layout = layout_of(em)
    var = _declare(em, op, v, layout)
    layout.before_read(em, op, v)
    with layout.loops(em, tile_dims(v), v):
        em.line(f"{layout.ref(var, tile_dims(v))} = {_evaluate_detached(em, v, layout)};")


def _evaluate_detached(em: KernelEmitter, v: SSAValue, layout: Layout) -> str:
    """`v`'s element from its operands (not from the registers `v` is being computed into)."""
    var = em.values.pop(v)
    try:
        return element(em, v, layout)
    finally:
        em.values[v] = var


def _declare(em: KernelEmitter, op: Operation, v: SSAValue, layout: Layout) -> str:
    var = em.names.fresh(v.name_hint or "tile")
    em.source_comment(op)
    rows, cols = tile_dims(v)
    em.line(f"{tile_ctype(v)} {var}{layout.decl((rows, cols))};  // ({rows}, {cols})")
    em.values[v] = var
    return var


#: Independent accumulators of a row max/min: column c folds into chain c % _CHAINS, so the
#: dependent FMNMX sequence before a softmax's first exp2 is a quarter as long (max and
#: min are exact in any order, so the result is the same bits).
_CHAINS = 4


def tile_reduce(em: KernelEmitter, op: TileReduceOp) -> None:
    """Each row: this thread's columns in order (max and min in _CHAINS interleaved chains,
    then merged), then the lanes sharing the row, merged with butterfly shuffles (ties: the
    lowest column)."""
    layout = layout_of(em)
    kind = op.kind.data
    if op.axis.value.data == 0:
        _reduce_columns(em, op, layout)
        return
    rows, _ = tile_dims(op.source)
    var = _declare(em, op, op.result, layout)
    layout.before_read(em, op, op.source)
    arg = kind.startswith("arg")
    better = {"max": ">", "argmax": ">", "min": "<", "argmin": "<"}.get(kind)
    start = {"sum": "0.0f", "max": "-__int_as_float(0x7f800000)",
             "min": "__int_as_float(0x7f800000)"}.get(kind.removeprefix("arg"))
    chains = kind in _CALL2
    with em.block(), layout.row_loop(em, rows) if rows > 1 else _nothing():
        if chains:
            em.line(f"float cake_p[{_CHAINS}] = {{{', '.join([start] * _CHAINS)}}};")
        else:
            em.line(f"float cake_a = {start};")
        if arg:
            em.line("i32 cake_i = 0x7fffffff;")
        with layout.col_loop(em, op.source):
            em.line(f"const float cake_x = {element(em, op.source, layout)};")
            if kind == "sum":
                em.line("cake_a += cake_x;")
            elif arg:
                em.line(f"if (cake_x {better} cake_a || cake_i == 0x7fffffff) "
                        f"{{ cake_a = cake_x; cake_i = {layout.col()}; }}")
            else:
                p = f"cake_p[{C} % {_CHAINS}]"
                em.line(f"{p} = {_CALL2[kind]}({p}, cake_x);")
        if chains:
            f = _CALL2[kind]
            em.line(f"float cake_a = {f}({f}(cake_p[0], cake_p[1]), {f}(cake_p[2], cake_p[3]));")
        for m in layout.row_lanes:
            em.line(f"{{ const float cake_o = __shfl_xor_sync(0xffffffffu, cake_a, {m});")
            if kind == "sum":
                em.line("  cake_a += cake_o; }")
            elif arg:
                em.line(f"  const i32 cake_oi = __shfl_xor_sync(0xffffffffu, cake_i, {m});")
                em.line(f"  if (cake_o {better} cake_a || (cake_o == cake_a && cake_oi < cake_i)) "
                        "{ cake_a = cake_o; cake_i = cake_oi; } }")
            else:
                em.line(f"  cake_a = {_CALL2[kind]}(cake_a, cake_o); }}")
        em.line(f"{layout.ref(var, (rows, 1))} = {'cake_i' if arg else 'cake_a'};")


def tile_any(em: KernelEmitter, op: TileAnyOp) -> None:
    """`if lm.any(pred):`'s condition: this thread's elements of `pred` or-ed, then the warp's
    lanes (`__any_sync`, vote.sync.any): the same in every lane of a warp, so the branch on it
    never splits a warp (row reductions and tcgen05.ld inside it need all 32 lanes)."""
    layout = layout_of(em)
    var = em.names.fresh(op.result.name_hint or "cake_any")
    em.source_comment(op)
    em.line(f"bool {var} = false;")
    layout.before_read(em, op, op.pred)
    with em.block(), layout.loops(em, tile_dims(op.pred), op.pred):
        em.line(f"{var} |= {element(em, op.pred, layout)};")
    em.line(f"{var} = __any_sync(0xffffffffu, {var});")
    em.values[op.result] = var


def tile_assign(em: KernelEmitter, op: TileAssignOp) -> None:
    """`r = value`: each register of `r` from the same element of `value` (an elementwise
    expression reads only that element of `r`, so in place is exact)."""
    layout = layout_of(em)
    shape = tile_dims(op.dest)
    em.source_comment(op)
    layout.before_read(em, op, op.value)
    if op.dest not in tile_leaves(op.value):  # an MMA still writing `r` completes first
        layout.before_read(em, op, op.dest)
    trait = PACKED.get(dtype_name(op.dest.type.element_type))  # type: ignore[attr-defined]
    value = op.value
    load = value.owner
    if trait is None and isinstance(load, TileLoadOp) and deferred_load(load) and 1 not in shape:
        with em.block():  # `r = T.load(...)`: the block read two columns per load
            _load_pairs(em, load, layout, lambda: _lvalue(em, op.dest, layout))
        return
    if trait is not None and isinstance(value.owner, ConvertOp):  # converted as it is packed
        value = value.owner.source
    # A number fills every element: the loops run over the destination's registers.
    over = value if isinstance(value.type, TileType) else op.dest

    if trait is not None and op.dest not in em.values:
        raise Unsupported("assigning a register tile its role does not hold")

    def one() -> None:
        em.line(f"{_lvalue(em, op.dest, layout)} = {element(em, value, layout)};")

    def assign(_whole: bool) -> None:
        if 1 in shape or (trait is None and not any(
                leaf in _DEFERRED.get(em, {}) for leaf in tile_leaves(value))):
            with layout.loops(em, shape, over):
                if trait is None:
                    one()
                else:
                    em.line(f"{trait}::set({layout.ref_packed(em.values[op.dest], shape)}, "
                            f"{C} % 2, {element(em, value, layout)});")
            return
        # A column pair at a time: deferred loads in `value` read one access per pair
        # (paired_loads), and a 16-bit destination's register packed whole (one convert).
        with layout.row_loop(em, shape[0]), layout.col_loop(em, over, step=2):
            if trait is None:
                with paired_loads(em, value, layout):
                    for e in range(2):
                        with em.block():
                            em.line(f"const int {C} = {CP} + {e};")
                            one()
            else:
                column_pair(em, value, layout)
                em.line(f"{{ const int {C} = {CP}; "
                        f"{layout.ref_packed(em.values[op.dest], shape)} = "
                        f"{trait}::pack(cake_x[0], cake_x[1]); }}")

    with em.block():
        whole_or_checked(em, [], value, assign)


def _lvalue(em: KernelEmitter, dest: SSAValue, layout: Layout) -> str:
    special = layout.leaf(em, dest)
    if special is not None:
        return special
    if dest not in em.values:
        raise Unsupported("assigning a register tile its role does not hold")
    return layout.ref(em.values[dest], tile_dims(dest))


def column_pair(em: KernelEmitter, value: SSAValue, layout: Layout, n: int = 2) -> None:
    """`float cake_x[n]`: the elements of `value` at column slots cake_cp, ..., cake_cp + n − 1
    of row slot cake_r (a store's pair or run, or two 16-bit halves of a register-A
    fragment); for a pair, deferred loads read one access per pair (paired_loads)."""
    em.line(f"float cake_x[{n}];")
    with (paired_loads(em, value, layout) if n == 2 else nullcontext()):
        for e in range(n):
            em.line(f"{{ const int {C} = {CP} + {e}; cake_x[{e}] = {element(em, value, layout)}; }}")


@contextmanager
def paired_loads(em: KernelEmitter, value: SSAValue | None, layout: Layout) -> Iterator[None]:
    """In a column-pair loop (cake_cp: the pair's first column slot, whose next slot is the
    next column): each deferred (M, N) load `value` reads is read two columns at a time, one
    8- or 4-byte access for a whole block (`cake_whole_pair`), else the checked
    `cake_block_pair`, into `cake_pN[2]`; the elements at cake_c = cake_cp and cake_cp + 1
    inside the body are its halves. Without it a deferred load is one access per element."""
    loads = [] if value is None else list(dict.fromkeys(
        leaf for leaf in tile_leaves(value) if leaf in _DEFERRED.get(em, {})))
    paired = _PAIRED.setdefault(em, {})
    for leaf in loads:
        op = leaf.owner
        assert isinstance(op, TileLoadOp)
        var = em.names.fresh("cake_p")
        ctype = "i32" if tile_ctype_loaded(leaf) == "i32" else "float"
        at, rank, tensor = _DEFERRED[em][leaf], len(op.coords), em.val(op.tensor)
        em.line(f"{ctype} {var}[2];")
        read = (f"cake_whole_pair<{rank}, {_load_traits(op)}>({tensor}, {at}_b, {layout.row()}, "
                f"{layout.col()}, {var});" if leaf in _WHOLE.get(em, ()) else
                f"cake_block_pair<{rank}, {_load_traits(op)}>({tensor}, {at}_b, {layout.row()}, "
                f"{layout.col()}, {var}, ({ctype}){load_other(op, ctype)});")
        em.line(f"{{ const int {C} = {CP}; {read} }}")
        paired[leaf] = var
    yield
    for leaf in loads:
        del paired[leaf]


#: Per emitter: the deferred loads read a pair at a time in the current column-pair loop
#: (paired_loads) → the pair's registers.
_PAIRED: "WeakKeyDictionary[KernelEmitter, dict[SSAValue, str]]" = WeakKeyDictionary()


def run_length(layout: Layout, dtype: str) -> int:
    """Adjacent columns one access of a whole block moves: the layout's run for 4-byte
    elements (16 bytes in the quad layout), a pair otherwise."""
    return layout.vector if dtype in ("f32", "i32") else 2


def store_tile(em: KernelEmitter, op: TileStoreOp | TmaStoreOp, layout: Layout) -> None:
    """An (M, N) tile expression stored to the tile of a tensor's last two dimensions at tile
    `coords` (the leading ones element indices, as a block load reads them),
    converted to the tensor's dtype two adjacent columns at a time (one 4- or 8-byte store
    when the row allows it), elements outside the tensor skipped."""
    value, dtype = op.value, dtype_name(op.value.type.element_type)  # type: ignore[attr-defined]
    if isinstance(value.owner, ConvertOp) and isinstance(value.owner.source.type, TileType):
        value = value.owner.source
    if tile_dims(op.value)[0] == 1 and isinstance(op, TileStoreOp):
        _store_cols(em, op, value, dtype, layout)
        return
    rank = len(op.tensor.type.dims())  # type: ignore[attr-defined]
    if rank < 2 or dtype not in OUT_TRAITS:
        raise Unsupported(f"storing a {dtype} tile into a rank-{rank} tensor")
    rows, cols = tile_dims(op.value)
    em.source_comment(op)
    layout.before_read(em, op, value)
    out, trait = em.val(op.tensor), OUT_TRAITS[dtype]
    with em.block():
        em.line(f"const i32 cake_at[{rank}] = {_block_at(em, op.coords, rows, cols)};")
        checked = (f"cake_block_store_pair<{rank}, {trait}>({out}, cake_b, {layout.row()}, "
                   f"{layout.col()}, cake_x[0], cake_x[1]);")
        vec = run_length(layout, dtype)
        em.line(f"const CakeBlock cake_b = "
                f"{block_of(out, 'cake_at', rank, dtype, rows, cols, vec)};")
        whole = (f"cake_whole_store_pair<{rank}, {trait}>({out}, cake_b, {layout.row()}, "
                 f"{layout.col()}, cake_x[0], cake_x[1]);" if vec == 2 else
                 f"cake_whole_store_run<{rank}, {trait}, {vec}>({out}, cake_b, {layout.row()}, "
                 f"{layout.col()}, cake_x);")

        def store(is_whole: bool) -> None:
            n = vec if is_whole else 2
            with layout.row_loop(em, rows), layout.col_loop(em, value, step=n):
                column_pair(em, value, layout, n)
                em.line(f"{{ const int {C} = {CP}; {whole if is_whole else checked} }}")

        whole_or_checked(em, ["cake_b"], value, store)


#: Static SMEM of one `split_store`: the flag that tells the role's threads their CTA
#: arrived last (counted in CAKE-H009).
SPLIT_FLAG_BYTES = 4


def split_store(em: KernelEmitter, op: SplitStoreOp, layout: Layout) -> None:
    """`T.split_store(partial, ...)` (docs/language.md, "Split-K"): every thread writes its
    f32 elements of the partial to workspace[part] (column pairs, only elements inside T),
    fences them (`__threadfence`) and meets the role's barrier; one thread adds 1 to the
    tile's counter; the CTA that saw `parts - 1` there resets it to 0 and, after another
    fence, adds workspace[0..parts-1] per element in that order (so the sum does not depend
    on which CTA came last), converts and stores T's tile (bounds-checked). Nobody waits
    for another CTA, so no schedule of the CTAs can deadlock. With `transpose` the value's
    (r, c) is T's (c, r): a column pair of the value is a row pair of T (the helpers'
    template flag), the workspace indexed as T. With one part (a split route whose S is 1
    for the shape) the partial is stored as the sum directly."""
    value, dtype = op.value, dtype_name(op.tensor.type.element_type)  # type: ignore[attr-defined]
    if dtype not in ("f32", "bf16", "f16"):
        raise Unsupported(f"`split_store` of a sum into a {dtype} tensor")
    role = tile_role(em)
    rows, cols = tile_dims(value)
    t = op.transpose is not None
    if t:  # T's tile is (cols, rows); the thread's row and column of the value swap
        rows, cols = cols, rows
    flag_t = "true" if t else "false"
    out, work, count = em.val(op.tensor), em.val(op.workspace), em.val(op.counters)
    threads = 32 * len(role.warps)
    sync = ("__syncwarp();" if threads == 32
            else f"cake_named_barrier_sync({role.barrier_id}u, {threads}u);")
    flag = em.names.fresh("cake_split_last")
    em.source_comment(op)
    layout.before_read(em, op, value)
    with em.block():
        em.line(f"const i32 cake_tm = {em.val(op.coords[0])}, cake_tn = {em.val(op.coords[1])};")
        em.line(f"const i32 cake_row0 = {scaled('cake_tm', rows)};")
        em.line(f"const i32 cake_col0 = {scaled('cake_tn', cols)};")
        em.line(f"const i32 cake_part = {em.val(op.part)}, cake_parts = {em.val(op.parts)};")
        em.line(f"const long long cake_tile = cake_split_tile({out}, cake_tm, cake_tn, "
                f"{cols});")
        em.line(f"cake_split_check({out}, {work}, {count}, cake_part, cake_parts, cake_tile);")
        vrows = cols if t else rows
        at = ((f"cake_row0 + {layout.col()}", f"cake_col0 + {layout.row()}") if t
              else (f"cake_row0 + {layout.row()}", f"cake_col0 + {layout.col()}"))
        # One part (S came out 1 for the shape): the partial is the sum, stored directly,
        # with no workspace round trip and no arrival (cake_parts is uniform in the CTA).
        with em.block("if (cake_parts == 1)"):
            with layout.row_loop(em, vrows), layout.col_loop(em, value, step=2):
                column_pair(em, value, layout)
                em.line(f"{{ const int {C} = {CP}; cake_split_out<{flag_t}, "
                        f"{OUT_TRAITS[dtype]}>({out}, {at[0]}, {at[1]}, cake_x[0], "
                        "cake_x[1]); }")
        with em.block("else"):
            with layout.row_loop(em, vrows), layout.col_loop(em, value, step=2):
                column_pair(em, value, layout)
                em.line(f"{{ const int {C} = {CP}; cake_split_put<{flag_t}>({work}, {out}, "
                        f"cake_part, {at[0]}, {at[1]}, cake_x[0], cake_x[1]); }}")
            em.line(f"__shared__ int {flag};")
            em.line("__threadfence();  // this thread's partials, before the arrival")
            em.line(sync)
            em.line(f"if (threadIdx.x == {32 * role.first}u) {flag} = "
                    f"cake_split_arrive({count}, cake_tile, cake_parts);")
            em.line(sync)
            with em.block(f"if (*(volatile int*)&{flag})"):
                em.line("__threadfence();  // the other CTAs' partials, after their arrivals")
                _split_sums(em, layout, value, at, flag_t, work, out, OUT_TRAITS[dtype])


#: Column pairs the last CTA of a split_store sums at once per thread (64 f32 sums in
#: registers), and partial pairs it has in flight at once: the loads of PARTS_IN_FLIGHT =
#: SPLIT_LOADS // pairs parts are issued together (predicated past the last part), then added
#: in part order. One part per L2 round trip measured ~6-13 µs per unit on the H200 at 8-9
#: parts with DRAM saturated (docs/kernels.md, "Multi-wave splits").
SPLIT_SUM_PAIRS = 16
SPLIT_LOADS = 16


def _split_sums(em: KernelEmitter, layout: Layout, value: SSAValue, at: tuple[str, str],
                flag_t: str, work: str, out: str, trait: str) -> None:
    """The last CTA's sums, SPLIT_SUM_PAIRS of the thread's column pairs at a time: the sums
    zeroed; then, for `batch` parts at a time, every pair's partials of those parts loaded
    (independent loads, in flight together) and added part by part in order (the same
    additions in the same order as one part at a time: bitwise the same sums); then the
    pairs stored. Loading and storing pair by pair instead would wait one L2 round trip per
    pair and part (a store to `out` may alias the workspace, so the compiler keeps their
    order)."""
    rows, cols = tile_dims(value)
    half = layout.col_slots(cols) // 2
    total = layout.row_slots(rows) * half
    slot = (f"const int {R} = cake_p / {half}, {CP} = 2 * (cake_p % {half}), {C} = {CP}; "
            f"const i32 cake_i = {at[0]}, cake_j = {at[1]};")
    for lo in range(0, total, SPLIT_SUM_PAIRS):
        n = min(SPLIT_SUM_PAIRS, total - lo)
        batch = max(1, SPLIT_LOADS // n)
        pairs = f"for (int cake_p = {lo}; cake_p < {lo + n}; ++cake_p)"
        parts = f"for (int cake_dq = 0; cake_dq < {batch}; ++cake_dq)"
        with em.block():
            em.line(f"float cake_s[{n}][2];")
            em.line("#pragma unroll")
            em.line(f"for (int cake_p = 0; cake_p < {n}; ++cake_p) "
                    "cake_s[cake_p][0] = cake_s[cake_p][1] = 0.0f;")
            with em.block(f"for (i32 cake_q = 0; cake_q < cake_parts; cake_q += {batch})"):
                em.line(f"float2 cake_v[{batch}][{n}];")
                em.line("#pragma unroll")
                with em.block(parts):
                    em.line("#pragma unroll")
                    with em.block(pairs):
                        em.line(f"{slot} cake_v[cake_dq][cake_p - {lo}] = cake_q + cake_dq < "
                                f"cake_parts ? cake_split_get<{flag_t}>({work}, {out}, "
                                "cake_q + cake_dq, cake_i, cake_j) : make_float2(0.0f, 0.0f);")
                em.line("#pragma unroll")
                with em.block(parts):
                    with em.block("if (cake_q + cake_dq < cake_parts)"):
                        em.line("#pragma unroll")
                        with em.block(f"for (int cake_p = 0; cake_p < {n}; ++cake_p)"):
                            em.line("cake_s[cake_p][0] += cake_v[cake_dq][cake_p].x;")
                            em.line("cake_s[cake_p][1] += cake_v[cake_dq][cake_p].y;")
            em.line("#pragma unroll")
            with em.block(pairs):
                em.line(f"{slot} cake_split_out<{flag_t}, {trait}>({out}, cake_i, cake_j, "
                        f"cake_s[cake_p - {lo}][0], cake_s[cake_p - {lo}][1]);")


#: View dtypes a register tile is written into SMEM as: the trait's `sts_pair` stores two
#: adjacent columns (tf32 operands are f32 bits: the MMA ignores the low mantissa).
STAGE_STORE_TRAITS = {"bf16": "CakeOutBf16", "f16": "CakeOutF16", "f32": "CakeOutF32",
                      "tf32": "CakeOutF32"}


def stage_geometry(em: KernelEmitter, op: StageStoreOp | StageLoadOp
                   ) -> tuple[str, int, int, int, int]:
    """(stage address, rows, span, swizzle mask, element bytes) of the stage `op` writes or
    reads: derive-smem's column blocks of rows × span bytes (span = the whole row
    unswizzled)."""
    dest = op.dest if isinstance(op, StageStoreOp) else op.source
    stage = dest.owner
    view = stage.view.owner if isinstance(stage, StageOp) else None
    if not isinstance(view, ViewOp):
        raise Unsupported(f"`{'store' if isinstance(op, StageStoreOp) else 'load'}` of a "
                          "value that is not a view stage")
    rows, cols = tile_dims(dest)
    swizzle = em.attr_str(view, "cake.swizzle")
    elem = dtype_bytes(dest.type.element_type)  # type: ignore[attr-defined]
    span = SWIZZLE_SPAN[swizzle] or cols * elem
    return em.val(dest), rows, span, _swizzle_mask(swizzle), elem


def store_stage(em: KernelEmitter, op: StageStoreOp, layout: Layout) -> None:
    """`view[s].store(tile)`: each thread converts its elements two adjacent columns at a time
    and writes each pair where the view's layout puts it (cake_stage_addr: the column block,
    the row, the swizzled 16-byte chunk), so the bytes are those a TMA load would have
    written. Ordering the writes before an MMA or TMA store (the proxy fence, the role's
    barrier) is `lm.fence_proxy`'s (barriers.py)."""
    value, dtype = op.value, dtype_name(op.dest.type.element_type)  # type: ignore[attr-defined]
    if isinstance(value.owner, ConvertOp) and isinstance(value.owner.source.type, TileType):
        value = value.owner.source
    if dtype not in STAGE_STORE_TRAITS:
        raise Unsupported(f"`store` of a {dtype} tile into SMEM")
    addr, rows, span, swz, elem = stage_geometry(em, op)
    cols = tile_dims(op.value)[1]
    if cols == 1 and rows > 1:
        raise Unsupported("`store` of an (M, 1) vector into an SMEM stage")
    em.source_comment(op)
    layout.before_write(em, op, op.dest.owner.view)  # type: ignore[union-attr]
    layout.before_read(em, op, value)
    with em.block():
        em.line(f"const u32 cake_st = {unparen(addr)};")
        # A (1, N) vector is held by every row of the layout: one thread per column writes
        # row 0 (the row loop would run over the role's tile rows, past the stage).
        row, guard = (layout.row(), "") if rows > 1 else ("0", "if (cake_w) ")
        if rows == 1:
            em.line(f"const bool cake_w = {_col_writer(layout, cols)};")
        with (layout.row_loop(em, rows) if rows > 1 else nullcontext()), \
                layout.col_loop(em, value, step=2):
            column_pair(em, value, layout)
            em.line(f"{{ const int {C} = {CP}; {guard}{STAGE_STORE_TRAITS[dtype]}::sts_pair("
                    f"cake_stage_addr<{rows}u, {span}u, {swz}u, {elem}u>(cake_st, "
                    f"(u32){paren(row)}, (u32){paren(layout.col())}), cake_x[0], "
                    "cake_x[1]); }")


def store_rows(em: KernelEmitter, op: TileStoreOp, layout: Layout) -> None:
    """An (M, 1) vector as a run along the tensor's last dimension: one thread per row."""
    rows, _ = tile_dims(op.value)
    ctype = tile_ctype(op.value)
    rank = len(op.coords)
    em.source_comment(op)
    layout.before_read(em, op, op.value)
    with em.block():
        em.line(f"const i32 cake_at[{rank}] = {tile_coords(em, op, rows)};")
        em.line(f"const bool cake_w = {layout.writes_row()};")
        with layout.row_loop(em, rows):
            em.line(f"const {ctype} cake_x = {element(em, op.value, layout)};")
            em.line(f"if (cake_w) cake_store_row<{rank}, {ctype}>(cake_x, {em.val(op.tensor)}, "
                    f"cake_at, {layout.row()});")


def tile_coords(em: KernelEmitter, op: TileLoadOp | TileStoreOp, run: int) -> str:
    """`{c0, ..., cR-1 * run}`: element coordinates (the last one is the run's start)."""
    cs = [em.val(c) for c in op.coords]
    cs[-1] = scaled(cs[-1], run)
    return "{" + ", ".join(cs) + "}"


def load_other(op: TileLoadOp, ctype: str) -> str:
    """The value a vector load reads outside its tensor, as a C literal of type `ctype`."""
    return float_literal(op.other.value.data) if ctype == "float" else str(int(op.other.value.data))


def declare_row_vector(em: KernelEmitter, op: TileLoadOp | StageLoadOp, per_thread: int,
                       layout: str) -> tuple[str, str, int]:
    """Declare the register array a (1, N) vector load fills, N / `per_thread` elements per
    thread, with the layout's comment; returns (var, ctype, N). Other shapes are not
    lowered."""
    rows, cols = tile_dims(op.result)
    if rows != 1 or cols % 8:
        raise Unsupported(f"`load` of a ({rows}, {cols}) vector (one value per column, "
                          "N a multiple of 8, is supported)")
    ctype = tile_ctype(op.result)
    var = em.names.fresh(op.result.name_hint or "vec")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"{ctype} {var}[{cols // per_thread}];  // (1, {cols}): {layout}")
    return var, ctype, cols


def load_row_vector(em: KernelEmitter, op: TileLoadOp, helper: str, per_thread: int,
                    layout: str) -> None:
    """`T.load` of a (1, N) vector through the target's device helper (bounds, `other`)."""
    var, ctype, cols = declare_row_vector(em, op, per_thread, layout)
    rank = len(op.coords)
    with em.block():
        em.line(f"const i32 cake_c[{rank}] = {tile_coords(em, op, cols)};")
        em.line(f"{helper}<{cols}, {rank}, {ctype}>({var}, {em.val(op.tensor)}, cake_c, "
                f"({ctype}){load_other(op, ctype)});")


def _store_cols(em: KernelEmitter, op: TileStoreOp, value: SSAValue, dtype: str,
                layout: Layout) -> None:
    """A (1, N) vector as a run along the tensor's last dimension: one thread per column
    (the first of the lanes and warps that hold it), converted to the tensor's dtype."""
    if dtype not in OUT_TRAITS:
        raise Unsupported(f"storing a {dtype} vector")
    _, cols = tile_dims(op.value)
    rank = len(op.coords)
    em.source_comment(op)
    layout.before_read(em, op, value)
    with em.block():
        em.line(f"const i32 cake_at[{rank}] = {tile_coords(em, op, cols)};")
        em.line(f"const bool cake_w = {_col_writer(layout, cols)};")
        with layout.col_loop(em, value):
            em.line(f"const float cake_x = {element(em, value, layout)};")
            em.line(f"if (cake_w) cake_store_col<{rank}, {OUT_TRAITS[dtype]}>(cake_x, "
                    f"{em.val(op.tensor)}, cake_at, {layout.col()});")


def _col_writer(layout: Layout, cols: int) -> str:
    """The condition for the one thread that writes each column of a (1, N) vector: the first
    of the lanes and warps that hold it."""
    warps, index = layout.row_warps() if layout.col_lanes or layout.col_slots(cols) < cols \
        else (1, "0")
    mask = sum(layout.col_lanes)
    writer = [f"(cake_lane_id() & {mask}u) == 0u"] if mask else []
    writer += [f"{index} == 0"] if warps > 1 else []
    return " && ".join(writer) or "true"


def _reduce_columns(em: KernelEmitter, op: TileReduceOp, layout: Layout) -> None:
    """Each column of an (M, N) tile (`axis=0`) to a (1, N) vector: this thread's rows in
    order, then the lanes holding the column's other rows (butterfly shuffles), then the
    warps holding them, through `__shared__` scratch between two named-barrier syncs of the
    role (the first keeps an earlier reduction's readers ahead of these writes)."""
    kind = op.kind.data
    rows, cols = tile_dims(op.source)
    var = _declare(em, op, op.result, layout)
    layout.before_read(em, op, op.source)
    start = {"sum": "0.0f", "max": "-__int_as_float(0x7f800000)",
             "min": "__int_as_float(0x7f800000)"}[kind]
    fold = "cake_a + cake_o" if kind == "sum" else f"{_CALL2[kind]}(cake_a, cake_o)"
    out = layout.ref(var, (1, cols))
    with em.block(), layout.col_loop(em, op.source):
        em.line(f"float cake_a = {start};")
        with layout.row_loop(em, rows):
            em.line(f"const float cake_o = {element(em, op.source, layout)};")
            em.line(f"cake_a = {fold};")
        for m in layout.col_lanes:
            em.line(f"{{ const float cake_o = __shfl_xor_sync(0xffffffffu, cake_a, {m}); "
                    f"cake_a = {fold}; }}")
        em.line(f"{out} = cake_a;")
    warps, index = layout.row_warps()
    if warps == 1:
        return
    role = tile_role(em)
    sync = f"cake_named_barrier_sync({role.barrier_id}u, {32 * len(role.warps)}u);"
    scratch = em.names.fresh("cake_colred")
    with em.block():
        em.line(f"__shared__ float {scratch}[{len(role.warps)}][{cols}];  // per-warp column "
                f"partials ({column_scratch_bytes(op, len(role.warps))} B)")
        em.line(sync)
        mask = sum(layout.col_lanes)
        with layout.col_loop(em, op.source):
            em.line(f"if ((cake_lane_id() & {mask}u) == 0u) {scratch}[{index}][{layout.col()}] "
                    f"= {out};")
        em.line(sync)
        with layout.col_loop(em, op.source):
            em.line(f"float cake_a = {scratch}[0][{layout.col()}];")
            em.line("#pragma unroll")
            with em.block(f"for (int cake_w = 1; cake_w < {warps}; ++cake_w)"):
                em.line(f"const float cake_o = {scratch}[cake_w][{layout.col()}];")
                em.line(f"cake_a = {fold};")
            em.line(f"{out} = cake_a;")


def column_scratch_bytes(op: TileReduceOp, warps: int) -> int:
    """Static shared memory a column reduction (`axis=0`) of a role of `warps` warps declares:
    one f32 partial per warp and column (verify-conformance counts it against the SKU)."""
    return 4 * warps * tile_dims(op.source)[1] if op.axis.value.data == 0 else 0


# ---- (M, N) and (1, 1) loads ------------------------------------------------------------------


def _is_block(op: TileLoadOp) -> bool:
    return 1 not in tile_dims(op.result)


def _eval_point(v: SSAValue) -> Operation | None:
    """The op that evaluates tile `v` where it is consumed: its one consumer, followed
    through the pure ops (and `.to`) the evaluator inlines; None when that is not one op in
    the same block."""
    uses = list(v.uses)
    if len(uses) != 1:
        return None
    user = uses[0].operation
    if user.parent is not v.owner.parent:  # type: ignore[union-attr]
        return None
    if isinstance(user, ConvertOp) and isinstance(user.source.type, TileType):
        return _eval_point(user.result)
    if isinstance(user, PURE_TILE_OPS) and inlined(user):
        return _eval_point(user.results[0])
    return user


def deferred_load(op: TileLoadOp) -> bool:
    """Whether an (M, N) load is read by the op that consumes it, element by element (so no
    register holds the whole block): its consumer follows in the same block with only pure
    tile ops, `.to`, other loads and scalar arithmetic in between, so no store can
    intervene."""
    if not _is_block(op):
        return False
    user = _eval_point(op.result)
    return user is not None and _registers_kept(op, user)


def _load_traits(op: TileLoadOp) -> str:
    return _IN_TRAITS[dtype_name(op.result.type.element_type)]


def _block_at(em: KernelEmitter, coords: Sequence[SSAValue], rows: int, cols: int) -> str:
    """`{c0, ..., row0, col0}`: element coordinates of a (rows, cols) block's first element
    (the leading coordinates element indices, the last two tile indices)."""
    cs = [em.val(c) for c in coords]
    cs[-2], cs[-1] = scaled(cs[-2], rows), scaled(cs[-1], cols)
    return "{" + ", ".join(cs) + "}"


#: Per emitter: the deferred (M, N) loads lowered so far → their coordinate array.
_DEFERRED: "WeakKeyDictionary[KernelEmitter, dict[SSAValue, str]]" = WeakKeyDictionary()


#: The C element type of a tensor's dtype, as the block helpers (cake_block) address it.
_ELEM_CTYPE = {"f32": "float", "i32": "i32", "bf16": "u16", "f16": "u16"}


def block_of(tensor: str, at: str, rank: int, dtype: str, rows: int, cols: int,
             vec: int) -> str:
    """`cake_block<...>(...)`: the (rows, cols) block of `tensor` at element coordinates `at`
    (an i32 array), taken whole when it lies inside (one bounds decision per tile, tiles.cuh);
    read or written `vec` adjacent columns per access (1: element by element), so whole
    also asks that every run be aligned to one access."""
    return f"cake_block<{rank}, {_ELEM_CTYPE[dtype]}, {vec}>({tensor}, {at}, {rows}, {cols})"


def _declare_block(em: KernelEmitter, op: TileLoadOp, at: str) -> None:
    """Declare `{at}_b`, the CakeBlock of load `op` at coordinates `at`."""
    rows, cols = tile_dims(op.result)
    dtype = dtype_name(op.result.type.element_type)
    em.line(f"const CakeBlock {at}_b = "
            f"{block_of(em.val(op.tensor), at, len(op.coords), dtype, rows, cols, 2)};")


def _load_elem(em: KernelEmitter, op: TileLoadOp, layout: Layout) -> str:
    """One element of a deferred (M, N) load at (cake_r, cake_c), read where it is used."""
    at = _DEFERRED.get(em, {}).get(op.result)
    if at is None:
        raise em.undefined(op.result, "an (M, N) load read before its coordinates")
    pair = _PAIRED.get(em, {}).get(op.result)
    if pair is not None:
        return f"{pair}[{C} - {CP}]"
    if op.result in _WHOLE.get(em, ()):
        return (f"cake_whole_elem<{len(op.coords)}, {_load_traits(op)}>({em.val(op.tensor)}, "
                f"{at}_b, {layout.row()}, {layout.col()})")
    ctype = "i32" if tile_ctype_loaded(op.result) == "i32" else "float"
    return (f"cake_block_elem<{len(op.coords)}, {_load_traits(op)}>({em.val(op.tensor)}, "
            f"{at}_b, {layout.row()}, {layout.col()}, ({ctype}){load_other(op, ctype)})")


#: Per emitter: the deferred (M, N) loads the code being emitted reads as whole blocks.
_WHOLE: "WeakKeyDictionary[KernelEmitter, set[SSAValue]]" = WeakKeyDictionary()


def whole_or_checked(em: KernelEmitter, blocks: list[str], value: SSAValue | None,
                     body: Callable[[bool], None]) -> None:
    """Emit `body` twice, `if (every block whole) { body(True) } else { body(False) }`:
    `blocks` names CakeBlocks the body itself addresses, and every deferred load `value`
    (if any) reads adds its own; in the first copy those loads read without per-element bounds. One
    uniform decision per tile keeps exact tail semantics (the second copy is the checked
    code) while a tile that lies inside pays no check per element. Without any block, the
    body once, checked."""
    loads = [] if value is None else [
        leaf for leaf in tile_leaves(value) if leaf in _DEFERRED.get(em, {})]
    conds = blocks + [f"{_DEFERRED[em][leaf]}_b" for leaf in loads]
    if not conds:
        body(False)
        return
    whole = _WHOLE.setdefault(em, set())
    added = [leaf for leaf in loads if leaf not in whole]
    with em.block(f"if ({' && '.join(f'{b}.whole' for b in dict.fromkeys(conds))})"):
        whole.update(added)
        body(True)
        whole.difference_update(added)
    with em.block("else"):
        body(False)


def _load_pairs(em: KernelEmitter, op: TileLoadOp, layout: Layout,
                dest: Callable[[], str]) -> None:
    """Fill the registers `dest()` names at (cake_r, cake_c) with the block, two adjacent
    columns per load (one 8-, 4- or 16-bit-pair access when the row allows it), or, for a
    whole f32/i32 block in a layout of longer runs, `layout.vector` columns per load (one
    16-byte access in the quad layout)."""
    rows, cols = tile_dims(op.result)
    rank = len(op.coords)
    ctype = "i32" if tile_ctype_loaded(op.result) == "i32" else "float"
    at = _DEFERRED.get(em, {}).get(op.result)
    if at is None:
        at = "cake_at"
        em.line(f"const i32 cake_at[{rank}] = {_block_at(em, op.coords, rows, cols)};")
    dtype = dtype_name(op.result.type.element_type)
    vec = run_length(layout, dtype)
    em.line(f"const CakeBlock cake_pb = "
            f"{block_of(em.val(op.tensor), at, rank, dtype, rows, cols, vec)};")
    def load(whole: bool) -> None:
        n = vec if whole else 2
        with layout.row_loop(em, rows), layout.col_loop(em, op.result, step=n):
            em.line(f"{ctype} cake_x[{n}];")
            whole_read = (f"cake_whole_pair<{rank}, {_load_traits(op)}>" if n == 2 else
                          f"cake_whole_run<{rank}, {_load_traits(op)}, {n}>")
            read = (f"{whole_read}({em.val(op.tensor)}, "
                    f"cake_pb, {layout.row()}, {layout.col()}, cake_x);" if whole else
                    f"cake_block_pair<{rank}, {_load_traits(op)}>({em.val(op.tensor)}, "
                    f"cake_pb, {layout.row()}, {layout.col()}, cake_x, "
                    f"({ctype}){load_other(op, ctype)});")
            em.line(f"{{ const int {C} = {CP}; {read} }}")
            for e in range(n):
                em.line(f"{{ const int {C} = {CP} + {e}; {dest()} = cake_x[{e}]; }}")

    whole_or_checked(em, ["cake_pb"], None, load)


def load_tile(em: KernelEmitter, op: TileLoadOp, layout: Layout) -> bool:
    """The loads every layout lowers alike: an (M, N) block (read at its consumer when that
    is deferrable, else into registers two columns at a time), a (1, 1) scalar (every
    thread reads it) and 16-bit vectors. Returns False for the f32 / i32 vectors the backend
    lowers itself."""
    rows, cols = tile_dims(op.result)
    rank = len(op.coords)
    if (rows, cols) == (1, 1):
        ctype = tile_ctype_loaded(op.result)
        var = em.names.fresh(op.result.name_hint or "scalar")
        em.values[op.result] = var
        em.source_comment(op)
        em.line(f"{ctype} {var};  // (1, 1): in every thread")
        with em.block():
            em.line(f"const i32 cake_at[{rank}] = {tile_coords(em, op, 1)};")
            em.line(f"{var} = cake_load_run_elem<{rank}, {_load_traits(op)}>({em.val(op.tensor)}, "
                    f"cake_at, 0, ({ctype}){load_other(op, ctype)});")
        return True
    if not _is_block(op):
        if dtype_name(op.result.type.element_type) not in ("bf16", "f16"):
            return False  # f32 / i32 vectors: the backend's own helpers
        load_vector(em, op, layout)
        return True
    if deferred_load(op):
        # Its consumer reads each element (an assignment: two per load) at these coordinates.
        at = em.names.fresh(f"{op.result.name_hint or 'block'}_at")
        _DEFERRED.setdefault(em, {})[op.result] = at
        em.source_comment(op)
        em.line(f"const i32 {at}[{rank}] = {_block_at(em, op.coords, rows, cols)};  // ({rows}, {cols}): read where "
                "it is used")
        _declare_block(em, op, at)
        return True
    ctype = "i32" if tile_ctype_loaded(op.result) == "i32" else "float"
    var = em.names.fresh(op.result.name_hint or "block")
    em.source_comment(op)
    em.line(f"{ctype} {var}{layout.decl((rows, cols))};  // ({rows}, {cols}) loaded")
    em.values[op.result] = var
    with em.block():
        _load_pairs(em, op, layout, lambda: layout.ref(var, (rows, cols)))
    return True


def load_vector(em: KernelEmitter, op: TileLoadOp, layout: Layout) -> None:
    """A (1, N) or (M, 1) vector (16-bit ones widened to f32): each thread its own column
    (row) slots of the layout, by plain loads when the whole run lies inside the tensor (one
    uniform test, `cake_run_block`), else element by element with bounds. Per-element tests
    compiled to a branch around each load, and each branch waited for its load: the KDA
    decode step's (1, 16) value vector took four DRAM round trips."""
    rows, cols = tile_dims(op.result)
    rank = len(op.coords)
    ctype = tile_ctype_loaded(op.result)
    var = em.names.fresh(op.result.name_hint or "vec")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"{ctype} {var}{layout.decl((rows, cols))};  // ({rows}, {cols}): this thread's "
            f"{'columns' if rows == 1 else 'rows'}")
    pos = layout.col() if rows == 1 else layout.row()
    tensor, trait = em.val(op.tensor), _load_traits(op)

    def fill(whole: bool) -> None:
        read = (f"cake_whole_run_elem<{rank}, {trait}>({tensor}, cake_vb, {pos})" if whole else
                f"cake_load_run_elem<{rank}, {trait}>({tensor}, cake_at, {pos}, "
                f"({ctype}){load_other(op, ctype)})")
        with (layout.col_loop(em, op.result) if rows == 1 else layout.row_loop(em, rows)):
            em.line(f"{layout.ref(var, (rows, cols))} = {read};")

    with em.block():
        em.line(f"const i32 cake_at[{rank}] = {tile_coords(em, op, max(rows, cols))};")
        em.line(f"const CakeBlock cake_vb = cake_run_block<{rank}>({tensor}, cake_at, "
                f"{max(rows, cols)});")
        whole_or_checked(em, ["cake_vb"], None, fill)


#: Element readers of loads (targets/emit/tiles.cuh): the stored type and its widening.
_IN_TRAITS = {"f32": "CakeInF32", "i32": "CakeInI32", "bf16": "CakeInBf16", "f16": "CakeInF16"}


def _swizzle_mask(tag: str) -> int:
    """The address bits (from bit 7 up) a swizzle XORs into the 16-byte chunk index: one less
    than the chunks in its span (128b: 7, 64b: 3, 32b: 1, none: 0)."""
    span = SWIZZLE_SPAN[tag]
    return span // 16 - 1 if span else 0


def sum_sq_layout(em: KernelEmitter, op: SumSqOp) -> tuple[int, int, int, int, int]:
    """(rows, atoms, atom bytes, row pitch, swizzle mask) of the stage `lm.sum_sq` reads:
    derive-smem's column blocks of rows × pitch bytes, each row read in 16-byte chunks."""
    stage = op.source.owner
    view = stage.view.owner if isinstance(stage, StageOp) else None
    if not isinstance(view, ViewOp):
        raise Unsupported("`lm.sum_sq` of a value that is not a view stage")
    rows = op.result.type.dims()[0]  # type: ignore[attr-defined]
    atoms, atom_bytes = em.attr_int(view, "cake.atoms"), em.attr_int(view, "cake.atom_bytes")
    pitch = atom_bytes // rows
    if pitch % 16 or pitch * rows != atom_bytes:
        raise Unsupported(f"`lm.sum_sq` of rows of {pitch} bytes (a multiple of 16 is needed)")
    return rows, atoms, atom_bytes, pitch, _swizzle_mask(em.attr_str(view, "cake.swizzle"))


#: The lowerings of the shared tile ops (a backend adds them with its `tile_layout`).
TILE_LOWERINGS = {
    **{t: pure_tile for t in PURE_TILE_OPS}, TileReduceOp: tile_reduce,
    TileAnyOp: tile_any, TileAssignOp: tile_assign,
    StageStoreOp: lambda em, op: store_stage(em, op, layout_of(em)),
    SplitStoreOp: lambda em, op: split_store(em, op, layout_of(em)),
}
