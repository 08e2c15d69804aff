"""Cake's kernel library: torch functions on the shipped .cake kernels (sm_90 GPUs).

    from cakec.kernels import gemm, gemm_bias_gelu, kmeans_assign, kmeans
    c = gemm(a, b)                    # a [M, K] · b [N, K]ᵀ, bf16 -> torch.ops.cake.gemm
    c = gemm_bias_gelu(a, b, bias)    # gelu_tanh(a · bᵀ + bias), fused -> cake::gemm_bias_gelu
    idx, dist = kmeans_assign(x, c)   # nearest centroid -> torch.ops.cake.kmeans_assign
    o = kda_decode(q, k, v, g, beta, state)          # Kimi Delta Attention, one decode step
    o, s = kda_prefill(q, k, v, g, beta, output_final_state=True)   # whole sequences
    gemm_route(1, 4096, 4096)         # the route (variant) gemm takes for that shape

Each entry but the KDA ones is registered as a `cake::` torch op with a fake implementation, so
torch.compile(fullgraph=True) traces through it and CUDA graphs capture it. Importing this
package imports torch but compiles nothing: each kernel is built on first use and cached on
disk per (kernel, target, toolkit) (cakec/kernels/build.py).
"""

from cakec.kernels.epilogue import gemm_bias_gelu
from cakec.kernels.gemm import gemm
from cakec.kernels.kda import kda_decode, kda_prefill
from cakec.kernels.gemm import route_of as gemm_route
from cakec.kernels.kmeans import csq_buffer, kmeans, kmeans_assign
from cakec.kernels.kmeans import route_of as kmeans_assign_route

__all__ = ["gemm", "gemm_bias_gelu", "kmeans_assign", "kmeans", "csq_buffer", "gemm_route",
           "kmeans_assign_route", "kda_decode", "kda_prefill"]
