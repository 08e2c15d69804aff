"""Renderings of the target capability table (targets/sku.py): text for `cakec targets`, JSON for
`--format json`, and Markdown embedded in docs/targets.md (a test keeps the doc equal to it).

Text and Markdown are built from the same rows, so they cannot disagree with each other.
"""

from dataclasses import asdict
from typing import Any

from cakec.targets import sku as table

Rows = list[list[str]]


def _version(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def _families(sku: table.Sku) -> list[str]:
    return [f for f in table.FAMILIES if f in sku.families]


def _ab(form: table.MmaForm) -> str:
    if all(a == b for a, b in form.ab_dtypes):
        return ", ".join(a for a, _ in form.ab_dtypes)
    a_types = dict.fromkeys(a for a, _ in form.ab_dtypes)
    b_types = dict.fromkeys(b for _, b in form.ab_dtypes)
    return f"{'/'.join(a_types)} x {'/'.join(b_types)}"


_SKU_HEADERS = ["target", "GPU", "smem/block (B)", "TMEM cols", "cluster", "min PTX", "families"]


def _sku_rows(sep: str) -> Rows:
    return [[s.name, s.description, str(s.smem_per_block_optin), str(s.tmem_columns or "-"),
             str(s.max_cluster_size or "-"), _version(s.min_ptx_version), sep.join(_families(s))]
            for s in table.SKUS.values()]


_FORM_HEADERS = ["target", "instruction", "CTAs", "kind", "A x B", "acc", "M", "N", "K", "acc in",
                 "issued by", "A from"]


def _form_rows() -> Rows:
    return [[s.name, f.instruction, str(f.cta_group), f.kind, _ab(f), ", ".join(f.acc_dtypes),
             "/".join(map(str, f.m)), ", ".join(map(str, f.n)), str(f.k), f.acc_location, f.issuer,
             "/".join(f.a_from)]
            for s in table.SKUS.values() for f in s.mma_forms]


_FAMILY_HEADERS = ["family", "min PTX", "covers"]


def _family_rows() -> Rows:
    return [[name, _version(table.PTX_MIN_VERSION[name]), covers]
            for name, covers in table.FAMILIES.items()]


_LIMIT_HEADERS = ["limit", "value"]


def _limit_rows() -> Rows:
    swizzles = [[f"swizzle {mode}", f"inner box <= {span} B, smem destination aligned to "
                                    f"{table.SWIZZLE_SMEM_ALIGN[mode]} B"]
                for mode, span in table.SWIZZLE_SPAN.items() if span]
    return [
        ["TMA rank", f"{table.TMA_RANK_MIN}..{table.TMA_RANK_MAX}"],
        ["TMA box", f"each dimension 1..{table.TMA_BOX_DIM_MAX} elements"],
        ["TMA global address and strides", f"multiple of {table.TMA_GLOBAL_ALIGN} B"],
        ["TMA inner box", f"multiple of {table.TMA_INNER_BOX_BYTES_MULTIPLE} B; at most the "
                          "swizzle span when swizzled"],
        ["no swizzle", f"smem destination aligned to {table.SWIZZLE_SMEM_ALIGN['none']} B"],
        *swizzles,
        ["TMEM allocation", f"power of two in [{table.TMEM_ALLOC_MIN_COLUMNS}, "
                            f"{table.TMEM_ALLOC_MAX_COLUMNS}] columns, {table.TMEM_LANES} lanes"],
        ["tcgen05.ld/st lanes", "warp w: lanes [32q, 32q + 32) with q = w % 4"],
        ["warpgroup (wgmma, setmaxnreg)", f"{table.WARPGROUP_WARPS} consecutive warps, the first a "
                                          f"multiple of {table.WARPGROUP_WARPS}"],
        ["setmaxnreg", f"{table.SETMAXNREG_MIN}..{table.SETMAXNREG_MAX}, "
                       f"multiple of {table.SETMAXNREG_STEP}"],
        ["mbarrier per phase", f"arrivals <= {table.MBARRIER_MAX_ARRIVALS}, "
                               f"tx bytes <= {table.MBARRIER_MAX_TX_BYTES} (2^20 - 1)"],
    ]


def _sections(family_sep: str) -> list[tuple[str, list[str], Rows]]:
    return [
        (f"Targets (default {table.DEFAULT_TARGET})", _SKU_HEADERS, _sku_rows(family_sep)),
        ("MMA forms", _FORM_HEADERS, _form_rows()),
        ("Instruction families", _FAMILY_HEADERS, _family_rows()),
        ("Limits (every target with the feature)", _LIMIT_HEADERS, _limit_rows()),
    ]


def _aligned(headers: list[str], rows: Rows) -> list[str]:
    widths = [max(map(len, col)) for col in zip(headers, *rows)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
            for row in [headers, *rows]]


def _markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def format_targets_text() -> str:
    """The capability matrix as aligned plain-text tables."""
    blocks = ["\n".join([title, *_aligned(headers, rows)])
              for title, headers, rows in _sections(family_sep=" ")]
    return "\n\n".join(blocks) + "\n"


def format_targets_markdown() -> str:
    """The capability matrix as Markdown tables (what docs/targets.md embeds)."""
    blocks = ["\n".join([f"### {title}", "", _markdown_row(headers),
                         _markdown_row(["---"] * len(headers)), *map(_markdown_row, rows)])
              for title, headers, rows in _sections(family_sep=", ")]
    return "\n\n".join(blocks) + "\n"


def sku_markdown_rows() -> list[str]:
    """One Markdown row per target, exactly as format_targets_markdown() writes it."""
    return [_markdown_row(r) for r in _sku_rows(", ")]


def targets_json() -> dict[str, Any]:
    """The capability matrix as plain JSON-serialisable data."""
    return {
        "default_target": table.DEFAULT_TARGET,
        "targets": [{
            "name": s.name, "sm": s.sm, "arch_suffix": s.arch_suffix, "description": s.description,
            "families": _families(s), "smem_per_block_optin": s.smem_per_block_optin,
            "max_threads_per_block": s.max_threads_per_block,
            "max_cluster_size": s.max_cluster_size, "tmem_columns": s.tmem_columns,
            "registers_per_sm": s.registers_per_sm, "min_ptx_version": _version(s.min_ptx_version),
            "mma_forms": [asdict(f) | {"issuer_threads": table.ISSUER_THREADS[f.issuer]}
                          for f in s.mma_forms],
        } for s in table.SKUS.values()],
        "families": {name: {"min_ptx_version": _version(table.PTX_MIN_VERSION[name]),
                            "covers": covers}
                     for name, covers in table.FAMILIES.items()},
        "limits": {
            "tma": {"rank": [table.TMA_RANK_MIN, table.TMA_RANK_MAX],
                    "box_dim_max": table.TMA_BOX_DIM_MAX,
                    "global_align": table.TMA_GLOBAL_ALIGN,
                    "inner_box_bytes_multiple": table.TMA_INNER_BOX_BYTES_MULTIPLE,
                    "swizzle_span": dict(table.SWIZZLE_SPAN),
                    "swizzle_smem_align": dict(table.SWIZZLE_SMEM_ALIGN)},
            "tmem": {"lanes": table.TMEM_LANES,
                     "alloc_columns": [table.TMEM_ALLOC_MIN_COLUMNS, table.TMEM_ALLOC_MAX_COLUMNS]},
            "warpgroup_warps": table.WARPGROUP_WARPS,
            "setmaxnreg": {"min": table.SETMAXNREG_MIN, "max": table.SETMAXNREG_MAX,
                           "step": table.SETMAXNREG_STEP},
            "mbarrier": {"max_arrivals": table.MBARRIER_MAX_ARRIVALS,
                         "max_tx_bytes": table.MBARRIER_MAX_TX_BYTES},
        },
    }
