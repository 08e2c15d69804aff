"""C-callable host launcher and C header for a compiled Cake kernel (docs/aot.md).

Built from the kernel's launch metadata (docs/abi.md, parsed by cakec.runtime.args), so the
C launcher and the Python runtime read one description of the kernel:

- `header(meta)`: a C header declaring `cudaError_t <kernel>_launch(...)` (per tensor: the
  device pointer, its shape and its strides in elements, numpy order; then the scalars; then
  the stream) and `const char* <kernel>_last_error(void)`.
- `cuda_launcher(meta)`: C++ host code appended to the emitted CUDA translation unit.
- `module_header(meta, image)`: the same API for users who do not compile CUDA C++: the
  header plus an implementation section (`#define CAKE_IMPLEMENTATION` in one .cpp file)
  that loads the embedded cubin/fatbin/PTX image, or a file, with cudaLibraryLoad*.

Each launch checks its arguments with the runtime's rules (cakec/runtime/args.py) before
any CUDA call and returns cudaErrorInvalidValue with a message instead of launching
garbage; then, once per device, checks the compute capability and the shared-memory
opt-in and raises the dynamic shared-memory limit; then evaluates the grid, encodes the
TMA tensor maps (cuTensorMapEncodeTiled, fetched through cudaGetDriverEntryPoint so the
program links only the CUDA runtime) and launches.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Mapping

from cakec import __version__
from cakec.runtime import expr
from cakec.runtime.args import (GRID_NAMES, SCALAR_DTYPES, TENSOR_DTYPES, TMAP_L2_PROMOTION,
                                TMAP_OOB_FILL, TMAP_SWIZZLE, Metadata, Param)
from cakec.targets.sku import TMA_GLOBAL_ALIGN, get_sku

# C type of each scalar parameter, keyed by its struct format in SCALAR_DTYPES.
_C_SCALAR = {"<i": "int32_t", "<I": "uint32_t", "<q": "int64_t", "<Q": "uint64_t",
             "<f": "float", "<d": "double"}
_GRID_LIMITS = (2**31 - 1, 65535, 65535)   # gridDim.x, .y, .z
_MAX_DEVICES = 64                          # per-device state slots in the launcher
# Names the generated code declares itself, which a parameter must not take.
_RESERVED = frozenset({
    "stream", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
    "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "export",
    "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
    "mutable", "namespace", "new", "operator", "private", "protected", "public", "register",
    "return", "short", "signed", "sizeof", "static", "struct", "switch", "template", "this",
    "throw", "true", "try", "typedef", "typename", "union", "unsigned", "using", "virtual",
    "void", "volatile", "while", "restrict", "nullptr", "constexpr", "noexcept", "decltype",
    "thread_local", "static_assert", "alignas", "alignof", "char16_t", "char32_t"})


@dataclass(frozen=True)
class _CParam:
    """One metadata parameter as the C signature spells it."""
    param: Param
    name: str                      # C identifier of the pointer or the scalar

    def dims(self, what: str) -> list[str]:
        return [f"{self.name}_{what}{d}" for d in range(self.param.rank)]

    def declaration(self) -> list[str]:
        if self.param.kind == "scalar":
            return [f"{_scalar_type(self.param)} {self.name}"]
        return [f"void* {self.name}", *(f"int64_t {n}" for n in self.dims("shape")),
                *(f"int64_t {n}" for n in self.dims("stride"))]


def _scalar_type(p: Param) -> str:
    return _C_SCALAR[SCALAR_DTYPES[p.dtype][0]]


def _c_params(meta: Metadata) -> list[_CParam]:
    """C names for the parameters: a C/C++ keyword, `stream` or a `cake_` name (the launcher's
    own locals) gets a trailing underscore; a clash between generated names is an error."""
    out = [_CParam(p, p.name + "_" if p.name in _RESERVED or p.name.startswith("cake_")
                   else p.name) for p in meta.params]
    names = [n for c in out for n in
             ([c.name] if c.param.kind == "scalar" else [c.name, *c.dims("shape"),
                                                          *c.dims("stride")])]
    if len(set(names)) != len(names):
        raise ValueError(f"{meta.kernel}: parameter names collide in the C signature: {names}")
    return out


def _parse(raw: Mapping[str, Any]) -> tuple[Metadata, list[_CParam]]:
    meta = Metadata.parse(raw)
    if not meta.kernel.isidentifier() or not meta.entry.isidentifier():
        raise ValueError(f"kernel {meta.kernel!r} / entry {meta.entry!r} are not C identifiers")
    return meta, _c_params(meta)


# ---------------------------------------------------------------- the header

def _signature(meta: Metadata, params: list[_CParam]) -> str:
    """One line per tensor (pointer, shape, strides), consecutive scalars on one line."""
    groups: list[list[str]] = []
    for prev, c in zip([None, *params], params):
        if c.param.kind == "scalar" and prev is not None and prev.param.kind == "scalar":
            groups[-1] += c.declaration()
        else:
            groups.append(c.declaration())
    text = ",\n    ".join(", ".join(g) for g in groups)
    return f"cudaError_t {meta.kernel}_launch(\n    {text},\n    cudaStream_t stream)"


def _shape_text(meta: Metadata, p: Param) -> str:
    """`[M, K]`: each dimension's scalar (shape_bindings or `shape`), literal, cap (`<=128`)
    or `*`."""
    bound = {(t, d): s for s, (t, d) in meta.shape_bindings.items()}
    dims = []
    for d in range(p.rank):
        want = p.shape[d] if p.shape else None
        most = p.max_shape[d] if p.max_shape else None
        dims.append(str(want) if want is not None else bound.get(
            (p.name, d), f"<={most}" if most is not None else "*"))
    return "[" + ", ".join(dims) + "]"


def _doc(meta: Metadata, params: list[_CParam]) -> str:
    tensors = [c for c in params if c.param.kind == "tensor"]
    scalars = [c for c in params if c.param.kind == "scalar"]
    width = max((len(c.name) for c in tensors), default=0)
    lines = [f"/* Launches {meta.kernel} on `stream` (0: the default stream) of the current "
             "device.", " * Tensors: device pointer, then shape and strides in elements, "
             "outermost dimension first;", " * the innermost stride must be 1. TMA operands "
             f"need a {TMA_GLOBAL_ALIGN}-byte aligned pointer and outer strides", f" * that "
             f"are multiples of {TMA_GLOBAL_ALIGN} bytes."]
    lines += [f" *   {c.name:<{width}}  {c.param.dtype} {_shape_text(meta, c.param)}"
              + ("  (TMA)" if c.param.tmaps else "") for c in tensors]
    if scalars:
        lines.append(" * Scalars: " + ", ".join(f"{c.name} ({_scalar_type(c.param)})"
                                                for c in scalars) + ".")
    if meta.constraints:
        lines.append(" * Requires: " + "; ".join(meta.constraints) + ".")
    lines += [f" * Grid: {', '.join(meta.grid)}.",
              f" * Block: {', '.join(map(str, meta.block))}; {meta.dynamic_smem} B of dynamic "
              f"shared memory; {meta.target}.",
              " * Returns cudaSuccess once the kernel is queued; on bad arguments "
              "cudaErrorInvalidValue,", f" * and nothing is launched. {meta.kernel}_last_error()"
              " says why a call failed. */"]
    return "\n".join(lines)


def _declarations(meta: Metadata, params: list[_CParam], loads: bool) -> str:
    k = meta.kernel
    calls = f"{k}_launch or {k}_load" if loads else f"{k}_launch"
    parts = [_doc(meta, params), _signature(meta, params) + ";", "",
             f"/* Why the last {calls} on this thread failed; \"\" after a success. */",
             f"const char* {k}_last_error(void);"]
    if loads:
        parts += ["", "/* Loads the kernel image once per process: from `path` (a cubin, fatbin "
                  "or PTX file) or,", " * with NULL, the image embedded in this header. "
                  f"{k}_launch loads the embedded one if nothing", " * is loaded yet. A second "
                  "load with a path fails (cudaErrorInvalidValue). */",
                  f"cudaError_t {k}_load(const char* path);"]
    return "\n".join(parts)


def _header_text(meta: Metadata, params: list[_CParam], loads: bool, body: str = "") -> str:
    guard = f"CAKE_{meta.kernel.upper()}_H"
    return f"""\
/* {meta.kernel}: C interface to a Cake kernel for {meta.target}. Generated by cakec {__version__};
 * do not edit. See docs/aot.md. */
#ifndef {guard}
#define {guard}

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {{
#endif

{_declarations(meta, params, loads)}

#ifdef __cplusplus
}}
#endif
{body}
#endif /* {guard} */
"""


def header(raw: Mapping[str, Any]) -> str:
    """The C header for the launcher that `cuda_launcher` appends to the .cu file."""
    meta, params = _parse(raw)
    return _header_text(meta, params, loads=False)


# ---------------------------------------------------------------- expressions

def _c_expr(text: str, env: Mapping[str, str]) -> str:
    """The metadata expression `text` (cakec/runtime/expr.py's language) as C++ over int64_t;
    `env` maps its names to C expressions; `cake_ev` collects division by zero."""
    return _c_node(expr.parse(text).body, env, text)


def _c_node(node: ast.AST, env: Mapping[str, str], text: str) -> str:
    c = lambda n: _c_node(n, env, text)  # noqa: E731
    if isinstance(node, ast.Constant):
        return f"INT64_C({node.value})"
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        return {ast.USub: f"(-{c(node.operand)})", ast.UAdd: c(node.operand),
                ast.Not: f"(int64_t)!{c(node.operand)}"}[type(node.op)]
    if isinstance(node, ast.BinOp):
        a, b = c(node.left), c(node.right)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            fn = "floordiv" if isinstance(node.op, ast.FloorDiv) else "floormod"
            return f"cake_host::{fn}(cake_ev, {a}, {b})"
        return f"({a} {({ast.Add: '+', ast.Sub: '-', ast.Mult: '*'})[type(node.op)]} {b})"
    if isinstance(node, ast.Compare):
        ops = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
               ast.GtE: ">="}
        sides = [node.left, *node.comparators]
        tests = [f"({c(l)} {ops[type(op)]} {c(r)})"
                 for l, op, r in zip(sides, node.ops, sides[1:])]  # noqa: E741
        return "(int64_t)(" + " && ".join(tests) + ")"
    if isinstance(node, ast.BoolOp):
        join = " && " if isinstance(node.op, ast.And) else " || "
        return "(int64_t)(" + join.join(f"({c(v)} != 0)" for v in node.values) + ")"
    assert isinstance(node, ast.Call)  # expr.parse admits nothing else
    return _c_call(node.func.id, [c(a) for a in node.args], text)  # type: ignore[attr-defined]


def _c_call(fn: str, args: list[str], text: str) -> str:
    if fn == "cdiv":
        if len(args) != 2:
            raise ValueError(f"{text!r}: cdiv takes 2 arguments")
        return f"cake_host::cdiv(cake_ev, {args[0]}, {args[1]})"
    if not args:
        raise ValueError(f"{text!r}: {fn} takes at least 1 argument")
    out = args[-1]
    for a in reversed(args[:-1]):
        out = f"cake_host::{fn}64({a}, {out})"
    return out


def _c_string(text: str) -> str:
    """A C string literal (a printf argument, never part of a format)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---------------------------------------------------------------- the launcher body

_SUPPORT = r"""
// ---- Cake host support: shared by every Cake launcher in a translation unit.
#ifndef CAKE_HOST_SUPPORT
#define CAKE_HOST_SUPPORT
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <mutex>

// Versioned, so launchers generated by different cakec releases can live in one program.
namespace cake_host {
inline namespace @VERSION@ {

constexpr int kMessageSize = 512;
constexpr long long kTmaAlign = @ALIGN@;  // TMA: base address and outer strides (bytes)

// A tensor argument as the kernel receives it (targets/emit/prelude.cuh: CakeTensor<R>).
template <int R> struct Tensor {
  void* ptr;
  long long shape[R];
  long long stride[R];
};

// Integer expressions of the metadata (cakec/runtime/expr.py): // and % floor like Python;
// a zero divisor clears `ok` instead of trapping.
struct Eval { bool ok = true; };
inline int64_t floordiv(Eval& e, int64_t a, int64_t b) {
  if (b == 0) { e.ok = false; return 0; }
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
inline int64_t floormod(Eval& e, int64_t a, int64_t b) {
  if (b == 0) { e.ok = false; return 0; }
  const int64_t r = a % b;
  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
inline int64_t cdiv(Eval& e, int64_t a, int64_t b) { return -floordiv(e, -a, b); }
inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// printf into the caller's message buffer; returns `code`, so a check reads `return fail(...)`.
inline cudaError_t fail(char* msg, cudaError_t code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, kMessageSize, fmt, ap);
  va_end(ap);
  return code;
}

// "[a, b, c]" for messages.
struct Dims { char text[160]; };
inline Dims dims(int rank, const long long* v) {
  Dims d;
  int n = snprintf(d.text, sizeof d.text, "[");
  for (int i = 0; i < rank; ++i)
    n += snprintf(d.text + n, sizeof d.text - n, "%s%lld", i ? ", " : "", v[i]);
  snprintf(d.text + n, sizeof d.text - n, "]");
  return d;
}

// The runtime's tensor rules (cakec/runtime/args.py, _tensor_facts) on a raw pointer, plus
// what a C caller can get wrong that a torch tensor cannot (null, negative extents).
inline cudaError_t check_tensor(char* msg, const char* kernel, const char* name, const void* ptr,
                                int rank, const long long* shape, const long long* stride,
                                int itemsize, bool tma) {
  if (ptr == nullptr)
    return fail(msg, cudaErrorInvalidValue, "%s: argument '%s' is a null pointer", kernel, name);
  for (int d = 0; d < rank; ++d)
    if (shape[d] < 0)
      return fail(msg, cudaErrorInvalidValue, "%s: argument '%s' has shape %s; extents must "
                  "be >= 0", kernel, name, dims(rank, shape).text);
  if (shape[rank - 1] != 1 && stride[rank - 1] != 1)
    return fail(msg, cudaErrorInvalidValue, "%s: argument '%s': innermost stride is %lld, must "
                "be 1 (a contiguous innermost dimension)", kernel, name, stride[rank - 1]);
  if (!tma) return cudaSuccess;
  if ((uintptr_t)ptr % kTmaAlign)
    return fail(msg, cudaErrorInvalidValue, "%s: argument '%s': data pointer %p is not "
                "%lld-byte aligned (TMA needs it; a sliced view may be misaligned)", kernel, name,
                ptr, kTmaAlign);
  for (int d = 0; d + 1 < rank; ++d) {
    const long long bytes = stride[d] > 0 && stride[d] < (1LL << 40) ? stride[d] * itemsize : 0;
    if (bytes <= 0 || bytes >= (1LL << 40) || bytes % kTmaAlign)
      return fail(msg, cudaErrorInvalidValue, "%s: argument '%s': stride of dim %d is %lld "
                  "bytes; TMA needs a positive multiple of %lld (shape %s, strides %s elements)",
                  kernel, name, d, stride[d] * itemsize, kTmaAlign, dims(rank, shape).text,
                  dims(rank, stride).text);
  }
  for (int d = 0; d < rank; ++d)
    if (shape[d] < 1 || shape[d] > (1LL << 32))
      return fail(msg, cudaErrorInvalidValue, "%s: argument '%s': shape %s has a dimension "
                  "outside [1, 2^32], which a tensor map cannot describe", kernel, name,
                  dims(rank, shape).text);
  return cudaSuccess;
}

// Device memory of `device`, or memory any device can reach (managed, mapped host).
inline cudaError_t check_pointer(char* msg, const char* kernel, const char* name,
                                 const void* ptr, int device) {
  cudaPointerAttributes a;
  const cudaError_t e = cudaPointerGetAttributes(&a, ptr);
  if (e != cudaSuccess)
    return fail(msg, e, "%s: argument '%s': cudaPointerGetAttributes(%p): %s", kernel, name,
                ptr, cudaGetErrorString(e));
  if (a.type == cudaMemoryTypeUnregistered)
    return fail(msg, cudaErrorInvalidValue, "%s: argument '%s' (%p) is not CUDA memory "
                "(a host pointer?)", kernel, name, ptr);
  if (a.type == cudaMemoryTypeDevice && a.device != device)
    return fail(msg, cudaErrorInvalidValue, "%s: argument '%s' (%p) is memory of device %d; "
                "the launch runs on device %d", kernel, name, ptr, a.device, device);
  return cudaSuccess;
}

// cuTensorMapEncodeTiled from the driver, looked up once through the runtime, so programs
// link only cudart.
inline cudaError_t tensor_map_encoder(char* msg, PFN_cuTensorMapEncodeTiled_v12000* out) {
  static std::once_flag once;
  static void* fn = nullptr;
  static cudaError_t status = cudaSuccess;
  std::call_once(once, [] {
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                              cudaEnableDefault, &found);
#else
    status = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found);
#endif
    if (status == cudaSuccess && found != cudaDriverEntryPointSuccess)
      status = cudaErrorSymbolNotFound;
  });
  if (status != cudaSuccess)
    return fail(msg, status, "cuTensorMapEncodeTiled is not available from the driver: %s",
                cudaGetErrorString(status));
  *out = (PFN_cuTensorMapEncodeTiled_v12000)fn;
  return cudaSuccess;
}

// A tiled tensor map over `ptr`; shape, strides and box in numpy order (outermost first),
// reversed here because the driver wants the innermost dimension first.
inline cudaError_t encode_tmap(char* msg, const char* kernel, const char* name, CUtensorMap* out,
                               int dtype, int rank, void* ptr, const long long* shape,
                               const long long* stride, int itemsize, const unsigned* box,
                               int swizzle, int l2, int oob) {
  PFN_cuTensorMapEncodeTiled_v12000 encode;
  if (const cudaError_t e = tensor_map_encoder(msg, &encode)) return e;
  cuuint64_t global_dims[5], global_strides[4];
  cuuint32_t box_dims[5], element_strides[5];
  for (int d = 0; d < rank; ++d) {
    global_dims[d] = (cuuint64_t)shape[rank - 1 - d];
    box_dims[d] = box[rank - 1 - d];
    element_strides[d] = 1;
  }
  for (int d = 0; d + 1 < rank; ++d)
    global_strides[d] = (cuuint64_t)(stride[rank - 2 - d] * itemsize);
  const CUresult r = encode(out, (CUtensorMapDataType)dtype, (cuuint32_t)rank, ptr, global_dims,
                            global_strides, box_dims, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)swizzle,
                            (CUtensorMapL2promotion)l2, (CUtensorMapFloatOOBfill)oob);
  if (r == CUDA_SUCCESS) return cudaSuccess;
  long long box_numpy[5];
  for (int d = 0; d < rank; ++d) box_numpy[d] = box[d];
  return fail(msg, cudaErrorInvalidValue, "%s: cuTensorMapEncodeTiled(%s, shape %s, box %s) "
              "failed: CUresult %d", kernel, name, dims(rank, shape).text,
              dims(rank, box_numpy).text, (int)r);
}

// What a launcher learns about a device once: whether the kernel runs there, and the facts
// its grid expressions read.
struct Device {
  std::once_flag once;
  cudaError_t status = cudaSuccess;
  char message[kMessageSize] = "";
  long long sm_count = 0, max_clusters = 0;
};

}  // namespace @VERSION@
}  // namespace cake_host
#endif  // CAKE_HOST_SUPPORT
"""


def _support() -> str:
    version = "v" + __version__.replace(".", "_")
    return _SUPPORT.replace("@ALIGN@", str(TMA_GLOBAL_ALIGN)).replace("@VERSION@", version)


# ---------------------------------------------------------------- per-kernel code

def _facts_code(meta: Metadata) -> list[str]:
    """C statements filling `d.<fact>` for each GRID_NAMES fact the grid reads (`fn` is the
    kernel, `device` the ordinal); the runtime's launch.py computes the same facts."""
    used = set().union(*(expr.names(g) for g in meta.grid)) & set(GRID_NAMES)
    if not used:
        return []
    threads = meta.block[0] * meta.block[1] * meta.block[2]
    lines = ["int sms = 0;",
             "if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)))",
             '  return cake_host::fail(msg, e, "%s: SM count: %s", k, cudaGetErrorString(e));',
             "d.sm_count = sms;"]
    if "max_clusters" not in used:
        return lines
    if meta.cluster == (1, 1, 1):  # CTAs resident at once
        return lines + [
            "int per_sm = 0;",
            "if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, "
            f"{threads}, {meta.dynamic_smem})))",
            '  return cake_host::fail(msg, e, "%s: occupancy: %s", k, cudaGetErrorString(e));',
            "d.max_clusters = (long long)sms * per_sm;"]
    cx, cy, cz = meta.cluster
    bx, by, bz = meta.block
    return lines + [
        "cudaLaunchAttribute cluster;",
        "cluster.id = cudaLaunchAttributeClusterDimension;",
        f"cluster.val.clusterDim.x = {cx}; cluster.val.clusterDim.y = {cy}; "
        f"cluster.val.clusterDim.z = {cz};",
        "cudaLaunchConfig_t config = {};",
        f"config.gridDim = dim3({cx}, {cy}, {cz});",
        f"config.blockDim = dim3({bx}, {by}, {bz});",
        f"config.dynamicSmemBytes = {meta.dynamic_smem};",
        "config.attrs = &cluster;",
        "config.numAttrs = 1;",
        "int clusters = 0;",
        "if ((e = cudaOccupancyMaxActiveClusters(&clusters, fn, &config)))",
        '  return cake_host::fail(msg, e, "%s: cluster occupancy: %s", k, '
        "cudaGetErrorString(e));",
        "d.max_clusters = clusters;"]


def _setup_code(meta: Metadata) -> str:
    """`<kernel>_setup(device, d)`: run once per device before its first launch."""
    sku = get_sku(meta.target)
    major, minor = divmod(sku.sm, 10)
    runs = (f"major == {major} && minor == {minor}" if sku.arch_suffix == "a"
            else f"major == {major} && minor >= {minor}")
    smem = meta.dynamic_smem
    raise_limit = [] if smem <= 48 * 1024 else [  # the default limit; above it needs opt-in
        f"if ((e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, {smem})))",
        '  return cake_host::fail(msg, e, "%s: raising the dynamic shared memory limit to '
        f'{smem} B: %s", k, cudaGetErrorString(e));']
    body = [
        "char* msg = d.message;",
        f'const char* k = "{meta.kernel}";',
        "int major = 0, minor = 0, optin = 0;",
        "cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, "
        "device);",
        "if (!e) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);",
        "if (!e) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, "
        "device);",
        'if (e) return cake_host::fail(msg, e, "%s: reading device %d: %s", k, device, '
        "cudaGetErrorString(e));",
        f"if (!({runs}))",
        "  return cake_host::fail(msg, cudaErrorNoKernelImageForDevice, \"%s was built for "
        f'{meta.target}; device %d is sm_%d%d", k, device, major, minor);',
        f"if (optin < {smem})",
        f'  return cake_host::fail(msg, cudaErrorInvalidConfiguration, "%s needs {smem} B of '
        'dynamic shared memory; device %d allows %d", k, device, optin);',
        "const void* fn = nullptr;",
        f"if ((e = {meta.kernel}_function(&fn, msg))) return e;",
        *raise_limit, *_facts_code(meta), "return cudaSuccess;"]
    return (f"cudaError_t {meta.kernel}_setup(int device, cake_host::Device& d) {{\n"
            + _indent(body) + "\n}")


def _indent(lines: list[str], by: str = "  ") -> str:
    return "\n".join(by + line if line else line for line in lines)


# Locals of `<kernel>_launch` are `cake_*` (parameters named so get a trailing underscore):
# per tensor X the kernel argument `cake_t_X`, per tensor map i `cake_m_X_i` and its box
# `cake_b_X_i`; otherwise cake_msg, cake_k, cake_e, cake_ev, cake_ok, cake_device, cake_dev,
# cake_grid, cake_fn, cake_args.
def _fail(message: str, *args: str) -> str:
    """A C statement returning cudaErrorInvalidValue with a printf message (`%s` first: the
    kernel name)."""
    tail = "".join(f", {a}" for a in args)
    return f"return cake_host::fail(cake_msg, cudaErrorInvalidValue, {message}, cake_k{tail});"


def _tensor_checks(params: list[_CParam]) -> list[str]:
    lines = []
    for c in params:
        p = c.param
        if p.kind != "tensor":
            continue
        shape, stride = ", ".join(c.dims("shape")), ", ".join(c.dims("stride"))
        t = f"cake_t_{p.name}"
        lines += [f"const cake_host::Tensor<{p.rank}> {t} = "
                  f"{{{c.name}, {{{shape}}}, {{{stride}}}}};",
                  f'if ((cake_e = cake_host::check_tensor(cake_msg, cake_k, "{p.name}", {c.name}, '
                  f"{p.rank}, {t}.shape, {t}.stride, {_itemsize(p)}, "
                  f"{'true' if p.tmaps else 'false'}))) return cake_e;"]
    return lines


def _shape_checks(meta: Metadata, params: list[_CParam]) -> list[str]:
    """shape_bindings (a scalar equals a tensor's extent), then declared shapes and caps, in
    the order and wording of cakec/runtime/args.py's bind()."""
    cname = {c.param.name: c.name for c in params}
    lines = []
    for s, (tensor, dim) in meta.shape_bindings.items():
        ext = f"cake_t_{tensor}.shape[{dim}]"
        lines += [f"if ((long long){cname[s]} != {ext})",
                  "  " + _fail(f'"%s: argument \'{s}\' = %lld but {tensor}.shape[{dim}] = %lld '
                               '(they must agree)"', f"(long long){cname[s]}", ext)]
    for c in params:
        t = f"cake_t_{c.param.name}"
        for d, want in enumerate(c.param.shape or ()):
            if want is None:
                continue
            shape = f"cake_host::dims({c.param.rank}, {t}.shape).text"
            if isinstance(want, str):
                lines += [f"if ({t}.shape[{d}] != (long long){cname[want]})",
                          "  " + _fail(f'"%s: argument \'{c.param.name}\' has shape %s; dim {d} '
                                       f'must be {want} = %lld"', shape,
                                       f"(long long){cname[want]}")]
            else:
                lines += [f"if ({t}.shape[{d}] != {want}LL)",
                          "  " + _fail(f'"%s: argument \'{c.param.name}\' has shape %s; dim {d} '
                                       f'must be {want}"', shape)]
        for d, most in enumerate(c.param.max_shape or ()):
            if most is not None:
                shape = f"cake_host::dims({c.param.rank}, {t}.shape).text"
                lines += [f"if ({t}.shape[{d}] > {most}LL)",
                          "  " + _fail(f'"%s: argument \'{c.param.name}\' has shape %s; dim {d} '
                                       f'must be at most {most} (the kernel covers no more)"', shape)]
    return lines


def _scalar_env(params: list[_CParam]) -> dict[str, str]:
    return {c.param.name: f"(int64_t){c.name}" for c in params if c.param.kind == "scalar"}


def _constraint_checks(meta: Metadata, params: list[_CParam]) -> list[str]:
    env = _scalar_env(params)
    lines = []
    for text in meta.constraints:
        names = sorted(expr.names(text))
        if not set(names) <= env.keys():
            raise ValueError(f"{meta.kernel}: constraint {text!r} reads device facts, which "
                             "the launcher checks before it looks at the device")
        values = ", ".join(f"{n} = %lld" for n in names)
        lit = _c_string(text)
        lines += ["{", "  cake_host::Eval cake_ev;",
                  f"  const int64_t cake_ok = {_c_expr(text, env)};",
                  "  if (!cake_ev.ok) " + _fail('"%s: constraint \'%s\': division by zero"', lit),
                  "  if (!cake_ok) " + _fail(f'"%s: constraint \'%s\' violated ({values})"', lit,
                                             *(f"(long long){env[n]}" for n in names)),
                  "}"]
    return lines


def _grid_code(meta: Metadata, params: list[_CParam]) -> list[str]:
    env = {**_scalar_env(params), **{f: f"cake_dev.{f}" for f in GRID_NAMES}}
    exprs = ", ".join(_c_expr(g, env) for g in meta.grid)
    text = _c_string("[" + ", ".join(meta.grid) + "]")
    lines = [
        "cake_host::Eval cake_ev;",
        f"const long long cake_grid[3] = {{{exprs}}};",
        "if (!cake_ev.ok) " + _fail('"%s: grid %s: division by zero"', text),
        "if (" + " || ".join(f"cake_grid[{i}] < 1 || cake_grid[{i}] > {lim}LL"
                             for i, lim in enumerate(_GRID_LIMITS)) + ")",
        "  " + _fail('"%s: grid %s evaluates to [%lld, %lld, %lld] for these arguments (each '
                     'must be >= 1: empty problem, or too large)"', text, "cake_grid[0]",
                     "cake_grid[1]", "cake_grid[2]")]
    if meta.cluster == (1, 1, 1):
        return lines
    cx, cy, cz = meta.cluster
    return lines + [
        f"if (cake_grid[0] % {cx} || cake_grid[1] % {cy} || cake_grid[2] % {cz})",
        "  " + _fail(f'"%s: grid [%lld, %lld, %lld] is not a multiple of the cluster shape '
                     f'[{cx}, {cy}, {cz}]"', "cake_grid[0]", "cake_grid[1]", "cake_grid[2]")]


def _tmap_code(params: list[_CParam]) -> tuple[list[str], list[str]]:
    """Encoding statements, and the kernel arguments in signature order (docs/abi.md: per
    tensor its maps then the tensor; per scalar the value)."""
    lines: list[str] = []
    args: list[str] = []
    for c in params:
        p = c.param
        if p.kind == "scalar":
            args.append(f"(void*)&{c.name}")
            continue
        t = f"cake_t_{p.name}"
        for i, spec in enumerate(p.tmaps):
            dt = TENSOR_DTYPES[p.dtype]
            m, box = f"cake_m_{p.name}_{i}", f"cake_b_{p.name}_{i}"
            lines += [f"CUtensorMap {m};",
                      f"static const unsigned {box}[{p.rank}] = "
                      f"{{{', '.join(map(str, spec.box))}}};",
                      f'if ((cake_e = cake_host::encode_tmap(cake_msg, cake_k, "{p.name}", &{m}, '
                      f"{dt.tma}, {p.rank}, {c.name}, {t}.shape, {t}.stride, {dt.itemsize}, {box}, "
                      f"{TMAP_SWIZZLE[spec.swizzle]}, {TMAP_L2_PROMOTION[spec.l2_promotion]}, "
                      f"{TMAP_OOB_FILL[spec.oob_fill]}))) return cake_e;"]
            args.append(f"(void*)&{m}")
        args.append(f"(void*)&{t}")
    return lines, args


def _launch_code(meta: Metadata, params: list[_CParam]) -> str:
    k = meta.kernel
    tmap_lines, args = _tmap_code(params)
    bx, by, bz = meta.block
    body = [
        f"char* cake_msg = {k}_message;",
        "cake_msg[0] = '\\0';",
        f'const char* cake_k = "{k}";',
        "cudaError_t cake_e;",
        "// 1. Arguments, before any CUDA call (the rules of cakec/runtime/args.py).",
        *_tensor_checks(params), *_shape_checks(meta, params),
        *_constraint_checks(meta, params),
        "// 2. The device: set up once; every pointer must be usable there.",
        "int cake_device = 0;",
        "if ((cake_e = cudaGetDevice(&cake_device)))",
        '  return cake_host::fail(cake_msg, cake_e, "%s: cudaGetDevice: %s", cake_k, '
        "cudaGetErrorString(cake_e));",
        f"if (cake_device < 0 || cake_device >= {_MAX_DEVICES})",
        '  return cake_host::fail(cake_msg, cudaErrorInvalidDevice, "%s: device %d: the launcher '
        f'keeps state for devices 0..{_MAX_DEVICES - 1}", cake_k, cake_device);',
        f"cake_host::Device& cake_dev = {k}_devices[cake_device];",
        f"std::call_once(cake_dev.once, [&] {{ cake_dev.status = {k}_setup(cake_device, "
        "cake_dev); });",
        "if (cake_dev.status)",
        '  return cake_host::fail(cake_msg, cake_dev.status, "%s", cake_dev.message);',
        *(f'if ((cake_e = cake_host::check_pointer(cake_msg, cake_k, "{c.param.name}", {c.name}, '
          "cake_device))) return cake_e;" for c in params if c.param.kind == "tensor"),
        "// 3. The grid.", *_grid_code(meta, params),
        "// 4. Tensor maps.", *tmap_lines,
        "// 5. Launch.",
        "const void* cake_fn = nullptr;",
        f"if ((cake_e = {k}_function(&cake_fn, cake_msg))) return cake_e;",
        f"void* cake_args[] = {{{', '.join(args)}}};",
        "cake_e = cudaLaunchKernel(cake_fn, dim3((unsigned)cake_grid[0], (unsigned)cake_grid[1], "
        f"(unsigned)cake_grid[2]), dim3({bx}, {by}, {bz}), cake_args, {meta.dynamic_smem}, "
        "stream);",
        "if (cake_e)",
        '  return cake_host::fail(cake_msg, cake_e, "%s: launch of grid [%lld, %lld, %lld] '
        'failed: %s", cake_k, cake_grid[0], cake_grid[1], cake_grid[2], '
        "cudaGetErrorString(cake_e));",
        "return cudaSuccess;"]
    return f'extern "C" {_signature(meta, params)} {{\n' + _indent(body) + "\n}"


def _kernel_code(meta: Metadata, params: list[_CParam], function: str) -> str:
    """Everything after the support block: state, `function` (how the kernel handle is
    obtained, which differs per variant), setup, `_last_error` and `_launch`."""
    k = meta.kernel
    return f"""
// ---- {k}: host launcher generated by cakec {__version__} from the launch metadata.
namespace {{
thread_local char {k}_message[cake_host::kMessageSize];
cake_host::Device {k}_devices[{_MAX_DEVICES}];

{function}

{_setup_code(meta)}
}}  // namespace

extern "C" const char* {k}_last_error(void) {{ return {k}_message; }}

{_launch_code(meta, params)}
"""


def cuda_launcher(raw: Mapping[str, Any]) -> str:
    """C++ host code to append to the emitted translation unit (compiled by nvcc), which
    defines the kernel `entry` above it."""
    meta, params = _parse(raw)
    function = (f"// The kernel is defined above in this translation unit.\n"
                f"cudaError_t {meta.kernel}_function(const void** fn, char*) {{\n"
                f"  *fn = (const void*)&{meta.entry};\n  return cudaSuccess;\n}}")
    return _support() + _kernel_code(meta, params, function)


def _c_bytes(image: bytes) -> str:
    data = image + b"\0"  # NUL-terminated, so a PTX image is also a C string
    return ",\n".join(",".join(f"0x{b:02x}" for b in data[i:i + 20])
                      for i in range(0, len(data), 20))


def _module_code(meta: Metadata, params: list[_CParam], image: bytes) -> str:
    """The implementation section of a module header: the embedded image, loading it (or a
    file) once per process with cudaLibraryLoad*, and the launcher over that kernel."""
    k, K = meta.kernel, meta.kernel.upper()
    function = f"""\
// The kernel image cakec built for {meta.target} ({len(image)} bytes).
alignas(64) const unsigned char {k}_image[] = {{
{_c_bytes(image)}}};
std::mutex {k}_lock;
cudaKernel_t {k}_kernel = nullptr;

cudaError_t {k}_load_into(const char* path, char* msg) {{
  std::lock_guard<std::mutex> hold({k}_lock);
  if ({k}_kernel)
    return path ? cake_host::fail(msg, cudaErrorInvalidValue, "{k}: a kernel image is already "
                                  "loaded; load a file before the first launch")
                : cudaSuccess;
  cudaLibrary_t library;
  cudaError_t e = path ? cudaLibraryLoadFromFile(&library, path, nullptr, nullptr, 0, nullptr,
                                                 nullptr, 0)
                       : cudaLibraryLoadData(&library, {k}_image, nullptr, nullptr, 0, nullptr,
                                             nullptr, 0);
  const char* what = path ? path : "the embedded kernel image";
  if (e) return cake_host::fail(msg, e, "{k}: loading %s: %s", what, cudaGetErrorString(e));
  if ((e = cudaLibraryGetKernel(&{k}_kernel, library, "{meta.entry}"))) {{
    cudaLibraryUnload(library);
    return cake_host::fail(msg, e, "{k}: %s has no kernel '{meta.entry}': %s", what,
                           cudaGetErrorString(e));
  }}
  return cudaSuccess;
}}

// The kernel of the loaded image (set once under the lock, never changed after).
cudaError_t {k}_function(const void** fn, char* msg) {{
  if (const cudaError_t e = {k}_load_into(nullptr, msg)) return e;
  *fn = (const void*){k}_kernel;
  return cudaSuccess;
}}"""
    return f"""
#if defined(CAKE_IMPLEMENTATION) && !defined(CAKE_{K}_IMPLEMENTED)
#define CAKE_{K}_IMPLEMENTED
#ifndef __cplusplus
#error "{k}: the implementation (CAKE_IMPLEMENTATION) is C++; define it in one .cpp file"
#endif
{_support()}{_kernel_code(meta, params, function)}
extern "C" cudaError_t {k}_load(const char* path) {{
  {k}_message[0] = '\\0';
  return {k}_load_into(path, {k}_message);
}}
#endif  /* CAKE_IMPLEMENTATION */
"""


def module_header(raw: Mapping[str, Any], image: bytes) -> str:
    """A header for a cubin, fatbin or PTX `image`: the declarations, and an implementation
    (plain C++ over the CUDA runtime) compiled where CAKE_IMPLEMENTATION is defined."""
    meta, params = _parse(raw)
    return _header_text(meta, params, loads=True, body=_module_code(meta, params, image))


def _itemsize(p) -> int:
    """Element bytes for the argument checks; a tensor of `any` dtype has no TMA checks."""
    return TENSOR_DTYPES[p.dtype].itemsize if p.dtype in TENSOR_DTYPES else 1
