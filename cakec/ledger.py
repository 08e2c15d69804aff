"""The `cakec inspect` ledger: what a derived module implies, as JSON.

Everything here is read from the `cake.*` attributes the derive passes wrote (docs/ir.md);
nothing is recomputed, so the ledger shows exactly what the gates and the emitters see.
Barrier and wait entries appear once derive-barriers has annotated them. Attributes a
pass adds beyond the ones named here are passed through under their name without the
`cake.` prefix, so new facts show up without touching this module.
"""

from __future__ import annotations

import json
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue

from cakec.dialects.cake import (
    ArriveOp, BarrierOp, CommitOp, KernelOp, MmaOp, RoleOp, SmemOp, StageOp, TileType, TmaLoadOp,
    TmaStoreOp, TmaStoreStageOp, TmemOp, ViewOp, WaitOp, dtype_name, stage_source,
)
from cakec.passes.derive_common import (
    attr_json, expr, get_int, get_ints, get_str, get_strs, get_u64, kernels, line_of, plus,
    role_of, sym, warps_of,
)
from cakec.targets.descriptors import LAYOUTS, decode_fields, tcgen05_kind

Json = dict[str, Any]

#: Longest object printed on one line (a descriptor bit field fits).
FLAT_WIDTH = 160


def ledger(module: ModuleOp) -> Json | list[Json]:
    """One object per kernel; a list only when the file defines several kernels."""
    entries = [kernel_ledger(k) for k in kernels(module)]
    return entries[0] if len(entries) == 1 else entries


def ledger_json(module: ModuleOp) -> str:
    return dump(ledger(module))


def dump(value: Any) -> str:
    """A ledger (or any entry of one) as `cakec inspect` prints it."""
    return _dump(value, "")


def _dump(value: Any, indent: str) -> str:
    """JSON with one entry per line, but a short container of scalars on a single line, so
    that an agent (and a golden test) sees a box or a bit field as one line."""
    line = json.dumps(value, ensure_ascii=False)
    if _flat(value) and (len(line) <= FLAT_WIDTH or not isinstance(value, dict)):
        return line
    inner = indent + "  "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_dump(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [f"{inner}{_dump(v, inner)}" for v in value]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"


def _flat(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_scalar_or_list(v) for v in value.values())
    if isinstance(value, list):
        return all(_scalar(v) for v in value)
    return True


def _scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def _scalar_or_list(value: Any) -> bool:
    return _scalar(value) or (isinstance(value, list) and all(_scalar(v) for v in value))


def kernel_ledger(kernel: KernelOp) -> Json:
    ops = list(kernel.walk())
    return {
        "kernel": kernel.sym_name.data,
        "target": get_str(kernel, "cake.target"),
        "block": _block(kernel, ops),
        "smem": _smem(kernel, ops),
        "tmem": _tmem(kernel, ops),
        "barriers": [_barrier(op) for op in ops
                     if isinstance(op, BarrierOp) and "cake.smem_offset" in op.attributes],
        "tma": [_tma(kernel, op) for op in ops
                if isinstance(op, (TmaLoadOp, TmaStoreOp, TmaStoreStageOp))
                and "cake.box" in op.attributes],
        "waits": [_wait(op) for op in ops
                  if isinstance(op, WaitOp) and "cake.parity" in op.attributes],
        "arrivals": [_arrival(op) for op in ops
                     if isinstance(op, (ArriveOp, CommitOp)) and _derived(op)],
        "descriptors": [_mma(op) for op in ops
                        if isinstance(op, MmaOp) and "cake.instr" in op.attributes],
        "tensor_maps": attr_json(kernel.attributes["cake.tmaps"])
        if "cake.tmaps" in kernel.attributes else [],
    }


def _derived(op: Operation) -> bool:
    return any(name.startswith("cake.") for name in op.attributes)


def _extras(op: Operation, known: set[str]) -> Json:
    """Derived attributes this module does not name, keyed without the `cake.` prefix."""
    return {name[5:]: attr_json(attr) for name, attr in op.attributes.items()
            if name.startswith("cake.") and name not in known}


def _role_name(op: Operation) -> str | None:
    role = role_of(op)
    return sym(role) if role is not None else None


def _block(kernel: KernelOp, ops: list[Operation]) -> Json:
    threads = get_int(kernel, "cake.block_threads")
    return {
        "warps": threads // 32 if threads is not None else None,
        "threads": threads,
        "roles": [{"name": sym(r), "warps": warps_of(r)} for r in ops if isinstance(r, RoleOp)],
    }


# ---- SMEM ------------------------------------------------------------------------------------


def _smem(kernel: KernelOp, ops: list[Operation]) -> Json:
    pools = [op for op in ops if isinstance(op, SmemOp)]
    out: Json = {
        "pool_bytes": sum(p.bytes.value.data for p in pools),
        "dynamic_bytes": get_int(kernel, "cake.dynamic_smem"),
    }
    barrier_bytes = get_int(kernel, "cake.barrier_smem")
    if barrier_bytes is not None:
        out["barrier_bytes"] = barrier_bytes
    out["pools"] = [{"name": sym(p), "base": get_int(p, "cake.base"),
                     "bytes": p.bytes.value.data} for p in pools]
    out["views"] = [_view(v) for v in ops if isinstance(v, ViewOp) and "cake.swizzle" in
                    v.attributes]
    return out


def _view(view: ViewOp) -> Json:
    offset = get_int(view, "cake.offset") or 0
    stage_bytes = get_int(view, "cake.stage_bytes") or 0
    stages = view.result.type.stages.data
    return {
        "name": sym(view),
        "line": line_of(view),
        "offset": offset,
        "stage_bytes": stage_bytes,
        "stages": stages,
        "stage_offsets": [offset + s * stage_bytes for s in range(stages)],
        "swizzle": get_str(view, "cake.swizzle"),
        "swizzle_reason": get_str(view, "cake.swizzle_reason"),
        "align": get_int(view, "cake.align"),
        "atoms": get_int(view, "cake.atoms"),
        "atom_bytes": get_int(view, "cake.atom_bytes"),
        # views with live ranges (`reuses=`): whose bytes it takes, where it is accessed
        **({"reuses": get_str(view, "cake.reuses")} if "cake.reuses" in view.attributes
           else {}),
        **({"live_lines": get_ints(view, "cake.live_lines")}
           if "cake.live_lines" in view.attributes else {}),
    }


def _tmem(kernel: KernelOp, ops: list[Operation]) -> Json:
    return {
        "allocated_columns": get_int(kernel, "cake.tmem_alloc"),
        "alloc_warp": get_int(kernel, "cake.tmem_warp"),
        "regions": [{"name": sym(r), "col": get_int(r, "cake.col"),
                     "width": get_int(r, "cake.width")}
                    for r in ops if isinstance(r, TmemOp) and "cake.col" in r.attributes],
    }


# ---- barriers and waits (written by derive-barriers) -----------------------------------------

_BARRIER_KEYS = {"cake.smem_offset": "smem_offset", "cake.arrivals": "arrivals_per_phase",
                 "cake.tx_bytes": "tx_bytes_per_phase",
                 "cake.first_wait_free": "first_wait_free"}


def _barrier(op: BarrierOp) -> Json:
    out: Json = {"name": sym(op), "line": line_of(op), "count": op.count.value.data}
    out |= {key: attr_json(op.attributes[a]) for a, key in _BARRIER_KEYS.items()
            if a in op.attributes}
    out["producers"] = [sym(r.owner) for r in op.prod]
    out["consumers"] = [sym(r.owner) for r in op.cons]
    return out | _extras(op, set(_BARRIER_KEYS))


def _sync_entry(op: WaitOp | ArriveOp | CommitOp) -> Json:
    return {"line": line_of(op), "role": _role_name(op), "barrier": sym(op.barrier.owner),
            "stage": expr(op.stage)}


def _wait(op: WaitOp) -> Json:
    out = _sync_entry(op)
    out["parity"] = attr_json(op.attributes["cake.parity"])
    return out | _extras(op, {"cake.parity"})


def _arrival(op: ArriveOp | CommitOp) -> Json:
    out = _sync_entry(op)
    out["op"] = "commit" if isinstance(op, CommitOp) else "arrive"
    return out | _extras(op, set())


# ---- TMA -------------------------------------------------------------------------------------

_TMA_KEYS = {"cake.box", "cake.copies", "cake.copy_step", "cake.tx_bytes", "cake.coords",
             "cake.tmap"}


def _tma(kernel: KernelOp, op: TmaLoadOp | TmaStoreOp | TmaStoreStageOp) -> Json:
    coords = get_strs(op, "cake.coords") or []
    copies = get_int(op, "cake.copies") or 1
    step = get_int(op, "cake.copy_step") or 0
    load = isinstance(op, TmaLoadOp)
    out: Json = {
        "line": line_of(op),
        "op": "tma_load" if load else "tma_store",
        "role": _role_name(op),
        "tensor": kernel.param_names.data[op.tensor.index].data,
        "view": (sym(op.view.owner) if load else _stage_view(op.source)
                 if isinstance(op, TmaStoreStageOp) else None),
        "stage": expr(op.stage) if load else None,
        "barrier": sym(op.barrier.owner) if load else None,
        "box": get_ints(op, "cake.box"),
        "copies": copies,
        "tx_bytes": get_int(op, "cake.tx_bytes"),
        "coords": coords,
        "tmap": get_int(op, "cake.tmap"),
    }
    if copies > 1:  # innermost coordinate first: copy j starts j*step elements further in
        out["copy_coords"] = [[plus(coords[0], j * step), *coords[1:]] for j in range(copies)]
    return out | _extras(op, _TMA_KEYS)


# ---- MMA descriptors -------------------------------------------------------------------------

_MMA_KEYS = {"cake.instr", "cake.mma_shape", "cake.k_steps", "cake.a_desc", "cake.b_desc",
             "cake.idesc", "cake.a_koffsets", "cake.b_koffsets", "cake.a_moffsets",
             "cake.warpgroups"}


def _mma(op: MmaOp) -> Json:
    instr = get_str(op, "cake.instr") or ""
    family = "tcgen05" if instr.startswith("tcgen05") else "wgmma"
    out: Json = {
        "line": line_of(op),
        "role": _role_name(op),
        "instr": instr,
        "shape": get_ints(op, "cake.mma_shape"),
        "k_steps": get_int(op, "cake.k_steps"),
        "acc": sym(op.acc.owner),
        "a": _stage_view(op.a),
        "b": _stage_view(op.b),
    }
    if "cake.warpgroups" in op.attributes:
        out["warpgroups"] = get_int(op, "cake.warpgroups")
    for name in ("a_desc", "b_desc"):
        bits = get_u64(op, f"cake.{name}")
        if bits is not None:
            out[name] = _bitfields(f"{family}_smem", bits)
    idesc = get_u64(op, "cake.idesc")
    if idesc is not None:
        a_t, b_t = (op.a.type.element_type, op.b.type.element_type)
        out["idesc"] = _bitfields("tcgen05_instr", idesc, _mma_kind(a_t, b_t))
    for name in ("a_koffsets", "b_koffsets", "a_moffsets"):
        if f"cake.{name}" in op.attributes:
            out[name] = get_ints(op, f"cake.{name}")
    return out | _extras(op, _MMA_KEYS)


def _stage_view(value: SSAValue) -> str | None:
    """The view an MMA operand reads, or "registers" for wgmma's register A."""
    stage = stage_source(value)[0].owner
    if isinstance(value.type, TileType):
        return "registers"
    return sym(stage.view.owner) if isinstance(stage, StageOp) else None


def _mma_kind(a_type: Attribute, b_type: Attribute) -> str | None:
    try:
        return tcgen05_kind(dtype_name(a_type), dtype_name(b_type))
    except (KeyError, ValueError):
        return None


def _bitfields(layout: str, bits: int, mma_kind: str | None = None) -> Json:
    """A descriptor as hex plus each field's bit range, decoded value and meaning."""
    width = 32 if layout == "tcgen05_instr" else 64
    values = decode_fields(layout, bits, mma_kind=mma_kind)
    return {
        "hex": f"0x{bits:0{width // 4}x}",
        "layout": layout,
        "fields": [{"name": f.name, "bits": f"{f.lsb + f.width - 1}:{f.lsb}",
                    "raw": (bits & f.mask) >> f.lsb, "value": values[f.name],
                    "meaning": f.meaning} for f in LAYOUTS[layout]],
        "reserved": values["reserved"],
    }
