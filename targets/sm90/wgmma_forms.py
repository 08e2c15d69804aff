"""The wgmma.mma_async device helpers a kernel uses, generated per form.

One helper per (N, K, D/A/B types, A from SMEM or registers, predicated or not), written
into the translation unit only when a lowering asks for it: 32 N values × 5 dtype classes
× 2 A sources × 2 guards would be 640 hand-written functions. The operand list follows the
PTX ISA (wgmma.mma_async):

    wgmma.mma_async.sync.aligned.m64nNkK.D.A.B  d, a-desc | {a0..a3}, b-desc, scale-d
                                                 [, imm-scale-a, imm-scale-b] [, imm-trans-a] [, imm-trans-b];

imm-scale-a/b exist for floating-point types only (not s8); imm-trans-a/b only for f16/bf16:
1 reads the operand MN-major (`view[s].T`), 0 K-major (tf32, fp8 and s8 operands are always
K-major); a register A has no imm-trans-a. D is N/2 registers per thread (f32, or s32 for s8), the
A fragment 4 b32 registers for every dtype (64 rows × 32 bytes of K per instruction).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The PTX type of the accumulator register per D type, as an inline-asm constraint and a C type.
_D_REGS = {"f32": ("f", "float"), "s32": ("r", "i32")}
_FLOAT_AB = ("bf16", "f16", "tf32", "e4m3", "e5m2")
#: A-fragment registers (b32) per thread: 64 rows × 32 bytes / 128 threads / 4 bytes.
A_REGS = 4


@dataclass(frozen=True)
class WgmmaForm:
    n: int
    k: int
    d: str  # PTX accumulator type: f32 | s32
    a: str  # PTX operand types: bf16 f16 tf32 e4m3 e5m2 s8
    b: str
    a_regs: bool = False  # A from registers (the RS form) instead of an SMEM descriptor
    guarded: bool = False  # issued under a runtime predicate
    trans_a: bool = False  # A read MN-major (imm-trans-a = 1; f16/bf16 only)
    trans_b: bool = False  # B read MN-major (imm-trans-b = 1)

    @property
    def instruction(self) -> str:
        return f"wgmma.mma_async.sync.aligned.m64n{self.n}k{self.k}.{self.d}.{self.a}.{self.b}"

    @property
    def name(self) -> str:
        return (f"cake_wgmma_m64n{self.n}k{self.k}_{self.d}_{self.a}_{self.b}"
                + ("_rs" if self.a_regs else "") + ("_ta" if self.trans_a else "")
                + ("_tb" if self.trans_b else "") + ("_if" if self.guarded else ""))

    def source(self) -> str:
        regs = self.n // 2
        constraint, ctype = _D_REGS[self.d]
        a_ops = A_REGS if self.a_regs else 1
        a_first, b_op, scale_op = regs, regs + a_ops, regs + a_ops + 1
        guard_op = scale_op + 1
        d_list = ", ".join(f"%{i}" for i in range(regs))
        a_list = ("{" + ", ".join(f"%{a_first + i}" for i in range(A_REGS)) + "}"
                  if self.a_regs else f"%{a_first}")
        imms = []
        if self.a in _FLOAT_AB:
            imms += ["1", "1"]  # imm-scale-a, imm-scale-b: no negation
        if self.a in ("bf16", "f16"):  # imm-trans-a (SMEM A only), imm-trans-b
            imms += ([] if self.a_regs else [str(int(self.trans_a))]) + [str(int(self.trans_b))]
        tail = "".join(f", {i}" for i in imms)
        pred = ".reg .pred p, g;\\n" if self.guarded else ".reg .pred p;\\n"
        guard = f"setp.ne.b32 g, %{guard_op}, 0;\\n@g " if self.guarded else ""
        outs = ", ".join(f'"+{constraint}"(d[{i}])' for i in range(regs))
        ins = ([f'"r"(a[{i}])' for i in range(A_REGS)] if self.a_regs else ['"l"(a)'])
        ins += ['"l"(b)', '"r"(scale_d)'] + (['"r"(guard)'] if self.guarded else [])
        a_param = f"const u32 (&a)[{A_REGS}]" if self.a_regs else "u64 a"
        guard_param = ", u32 guard" if self.guarded else ""
        where = "registers" if self.a_regs else "an SMEM descriptor"
        return (
            f"// {self.instruction}: D (+)= A[64x{self.k}] . B[{self.k}x{self.n}], A from {where}, "
            f"B from an SMEM descriptor;\n"
            f"// scale_d = 0 overwrites D{'; only where guard != 0 (uniform per warpgroup)' if self.guarded else ''}.\n"
            f"__device__ __forceinline__ void {self.name}({ctype} (&d)[{regs}], {a_param}, u64 b, "
            f"u32 scale_d{guard_param}) {{\n"
            f'  asm volatile("{{\\n{pred}setp.ne.b32 p, %{scale_op}, 0;\\n"\n'
            f'               "{guard}{self.instruction} "\n'
            f'               "{{{d_list}}}, "\n'
            f'               "{a_list}, %{b_op}, p{tail};\\n}}\\n"\n'
            f"               : {outs}\n"
            f"               : {', '.join(ins)});\n"
            "}\n")
