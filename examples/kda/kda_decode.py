"""Inputs, reference and baselines for examples/kda/kda_decode.cake (`cakec run` reads these),
and `reference_kda`, the float32 recurrence the GPU tests and bench/kda.py check against.

One decode step of Kimi Delta Attention per sequence (cakec.kernels.kda_decode is the call;
its docstring has the shapes). The kernel's parameters, in order: Q, K [B·H, 128] bf16;
V [B·HV, 128] bf16; G [B·HV, 128] f32; Beta [B·HV] f32; S, Sn [B·HV·128, 128] f32 (state in,
state out; the same tensor for an update in place); O [B·HV, 128] bf16; B·HV, HV, H, scale.

Inputs are what a model feeds a decode step: q, k L2-normalised per head (KDA normalises
them), v ~ N(0, 1), g = −softplus(x) with x ~ N(0, 1) − 2 (decays near 0.9, fla's range),
β = sigmoid(N(0, 1)), and a state the size a long prefix leaves (entries ~ N(0, 0.1)).

Baseline: fla's Triton `fused_recurrent_kda` (fla-core 0.6.0) on the same tensors (it writes
the new state into a tensor of its own).
"""

from __future__ import annotations

from cakec.api import example_generator

#: The head dimension the kernel is written for.
DIM = 128

#: Problem sizes (bench/kda.py's decode rows); the first is `cakec run`'s default.
shapes = [{"B": b, "H": hv, "HV": hv} for b in (256, 1, 8, 64) for hv in (32, 16)] + [
    {"B": 3, "H": 4, "HV": 16},   # grouped value heads (G = 4), an odd batch
]

#: Parameters the kernel writes (poisoned with NaN before the launch).
outputs = ["O", "Sn"]

#: Relative error allowed against the float32 reference: o is rounded to bf16.
tolerance = 1e-2


def decode_inputs(b: int, h: int, hv: int, device: str, gen=None) -> dict:
    """Fresh q, k, v, g, beta [B, 1, ·] and a state [B, HV, 128, 128], as described above."""
    import torch
    import torch.nn.functional as F

    def randn(*shape):
        return torch.randn(*shape, device=device, generator=gen)

    return {
        "q": F.normalize(randn(b, 1, h, DIM), dim=-1).to(torch.bfloat16),
        "k": F.normalize(randn(b, 1, h, DIM), dim=-1).to(torch.bfloat16),
        "v": randn(b, 1, hv, DIM).to(torch.bfloat16),
        "g": -F.softplus(randn(b, 1, hv, DIM) - 2.0),
        "beta": torch.sigmoid(randn(b, 1, hv)),
        "state": randn(b, hv, DIM, DIM) * 0.1,
    }


def make_inputs(shape: dict[str, int], device: str, seed: int | None = None) -> tuple:
    import torch

    gen = example_generator(device, seed)
    b, h, hv = shape["B"], shape["H"], shape["HV"]
    x = decode_inputs(b, h, hv, device, gen)
    o = torch.empty(b * hv, DIM, device=device, dtype=torch.bfloat16)
    s_new = torch.empty(b * hv * DIM, DIM, device=device, dtype=torch.float32)
    return (x["q"].view(b * h, DIM), x["k"].view(b * h, DIM), x["v"].view(b * hv, DIM),
            x["g"].view(b * hv, DIM), x["beta"].view(b * hv), x["state"].view(-1, DIM), s_new, o,
            b * hv, hv, h, DIM ** -0.5)


def reference_kda(q, k, v, g, beta, scale: float | None = None, initial_state=None):
    """(o [B, T, HV, 128] f32, final state [B, HV, 128, 128] f32): the KDA recurrence token by
    token in float32 (fla's `naive_recurrent_kda` semantics), for any T."""
    import torch

    b, t, h, dk = q.shape
    hv = v.shape[2]
    scale = dk ** -0.5 if scale is None else scale
    rep = hv // h
    qf = q.float().repeat_interleave(rep, dim=2) * scale
    kf = k.float().repeat_interleave(rep, dim=2)
    vf, gf, bf = v.float(), g.float(), beta.float()
    s = (torch.zeros(b, hv, dk, v.shape[3], device=q.device) if initial_state is None
         else initial_state.float().clone())
    o = torch.empty(b, t, hv, v.shape[3], device=q.device)
    for i in range(t):
        s = s * gf[:, i].exp().unsqueeze(-1)                           # decay each key row
        kt = kf[:, i]                                                  # [B, HV, K]
        u = bf[:, i].unsqueeze(-1) * (vf[:, i] - torch.einsum("bhk,bhkv->bhv", kt, s))
        s = s + kt.unsqueeze(-1) * u.unsqueeze(-2)                     # rank-1 update
        o[:, i] = torch.einsum("bhk,bhkv->bhv", qf[:, i], s)
    return o, s


def reference(inputs: tuple):
    """(O, Sn) in float32 from the kernel's flat views."""
    q, k, v, g, beta, s, _, _, bhv, hv, h, scale = inputs
    b = bhv // hv
    o, s_new = reference_kda(q.view(b, 1, h, DIM), k.view(b, 1, h, DIM), v.view(b, 1, hv, DIM),
                             g.view(b, 1, hv, DIM), beta.view(b, 1, hv), scale,
                             s.view(b, hv, DIM, DIM))
    return o.view(bhv, DIM), s_new.reshape(-1, DIM)


def flops(shape: dict[str, int]) -> float:
    """Per state element: decay, two dot-product FMAs, the update FMA (≈ 7 FLOP)."""
    return 7.0 * shape["B"] * shape["HV"] * DIM * DIM


def state_bytes(shape: dict[str, int]) -> int:
    """Bytes a decode step must move: the state in and out, plus q, k, v, g, β and o."""
    b, h, hv = shape["B"], shape["H"], shape["HV"]
    return b * (hv * DIM * DIM * 4 * 2 + h * DIM * 2 * 2 + hv * DIM * (2 + 4 + 2) + hv * 4)


def fla_decode(inputs: tuple):
    """fla's fused_recurrent_kda on the same step: it reads the state and writes the new one
    into a fresh tensor (its default, `inplace_final_state=False`)."""
    from fla.ops.kda import fused_recurrent_kda

    q, k, v, g, beta, s, _, _, bhv, hv, h, scale = inputs
    b = bhv // hv
    return fused_recurrent_kda(q.view(b, 1, h, DIM), k.view(b, 1, h, DIM),
                               v.view(b, 1, hv, DIM), g.view(b, 1, hv, DIM),
                               beta.view(b, 1, hv), scale=scale,
                               initial_state=s.view(b, hv, DIM, DIM), output_final_state=True)


#: Same-process contenders.
baselines = {"fla.fused_recurrent_kda": fla_decode}
