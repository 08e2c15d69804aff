"""`cakec`: the command-line driver.

Exit status: 0 no errors (warnings allowed), 1 errors in the input, 2 usage or I/O
problems. Heavy modules (xDSL, NVRTC, torch) are imported inside the commands that need
them so that `cakec --help` and `cakec verify` start fast.
"""

from __future__ import annotations

import sys

import click

from cakec import __version__

FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                      show_default=True, help="Diagnostic output format.")


def _known_target(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # An unknown --target is a usage error (exit 2), reported once, not once per file.
    if value is None:
        return None
    from cakec.targets.sku import SKUS

    if value not in SKUS:
        raise click.BadParameter(f"unknown target `{value}`; known targets: "
                                 + ", ".join(SKUS))
    return value


TARGET = click.option("--target", default=None, metavar="SKU", callback=_known_target,
                      help="Target SKU (see `cakec targets`); overrides the kernel's own.")


def _print_cmake_dir(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # cmake/ ships inside the package (wheel); an editable install uses the source tree's.
    if not value or ctx.resilient_parsing:
        return
    from pathlib import Path

    here = Path(__file__).resolve().parent
    for d in (here / "cmake", here.parent / "cmake"):
        if (d / "CakeConfig.cmake").is_file():
            click.echo(d)
            ctx.exit(0)
    click.echo("cakec: error: CakeConfig.cmake is not installed with this cakec", err=True)
    ctx.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cakec")
@click.option("--cmake-dir", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_cmake_dir,
              help="Print the directory of CakeConfig.cmake (for -DCake_DIR=) and exit.")
def main() -> None:
    """Cake: a verified schedule language and compiler for warp-specialized GPU kernels."""


def _load(path: str, target: str | None):
    from cakec.driver import read_source

    try:
        return read_source(path)
    except (OSError, UnicodeDecodeError) as e:
        click.echo(f"cakec: error: cannot read {path}: {getattr(e, 'strerror', None) or e}",
                   err=True)
        sys.exit(2)


def _report(comps, fmt: str) -> int:
    from cakec.diagnostics import render_json, render_text

    diags = [d for c in comps for d in c.sink.diagnostics]
    if fmt == "json":
        click.echo(render_json(diags))
    else:
        sources = {k: v for c in comps for k, v in c.sources.items()}
        text = render_text(diags, sources)
        if text:
            click.echo(text, err=True, nl=False)
    return 1 if any(not c.ok for c in comps) else 0


@main.command()
@click.argument("files", nargs=-1, required=True)
@TARGET
@FORMAT
def verify(files: tuple[str, ...], target: str | None, fmt: str) -> None:
    """Check FILES (syntax, names, types, and every verifier gate)."""
    from cakec.driver import verify_source

    comps = [verify_source(_load(f, target), target) for f in files]
    sys.exit(_report(comps, fmt))


@main.command()
@click.argument("file")
@TARGET
@click.option("--pass-pipeline", "pipeline", default="", metavar="NAMES",
              help="Comma-separated passes or aliases (derive, verify).")
@click.option("--print-loc", is_flag=True, help="Print loc(...) source locations.")
@click.option("--generic", is_flag=True, help="Print ops in generic form.")
@click.option("-o", "output", default="-", metavar="PATH", help="Output file (default stdout).")
@FORMAT
def opt(file: str, target: str | None, pipeline: str, print_loc: bool, generic: bool,
        output: str, fmt: str) -> None:
    """Print FILE (.cake or .mlir) as MLIR text after an optional pass pipeline."""
    from cakec.driver import build, run_passes

    comp = build(_load(file, target), target)
    try:
        run_passes(comp, pipeline)
    except ValueError as e:
        click.echo(f"cakec: error: {e}", err=True)
        sys.exit(2)
    status = _report([comp], fmt)
    if status or comp.module is None:
        sys.exit(status or 1)
    from cakec.ir_text import print_module

    text = print_module(comp.module, locations=print_loc, generic=generic)
    _write(output, text)


def _write(output: str, text: str | bytes) -> None:
    if output == "-":
        if isinstance(text, bytes):
            sys.stdout.buffer.write(text)
        else:
            click.echo(text, nl=False)
        return
    try:
        with open(output, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
    except OSError as e:
        click.echo(f"cakec: error: cannot write {output}: {e.strerror}", err=True)
        sys.exit(2)


@main.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]),
              default="text", show_default=True)
def targets(fmt: str) -> None:
    """Print the SKU table: instruction families and limits per target."""
    from cakec.targets import sku_table

    if fmt == "json":
        import json

        click.echo(json.dumps(sku_table.targets_json(), indent=2))
    elif fmt == "markdown":
        click.echo(sku_table.format_targets_markdown(), nl=False)
    else:
        click.echo(sku_table.format_targets_text(), nl=False)


@main.command()
@click.argument("file")
@TARGET
def inspect(file: str, target: str | None) -> None:
    """Print what FILE's schedule implies as JSON: SMEM/TMEM layout, barriers, waits with
    their parity, TMA boxes and coordinates, MMA instructions and descriptors."""
    from cakec.driver import build, run_passes

    comp = build(_load(file, target), target)
    if comp.ok:
        run_passes(comp, "verify")  # derive, then the gates: a ledger only for a valid kernel
    status = _report([comp], "text")
    if status or comp.module is None:
        sys.exit(status or 1)
    from cakec.ledger import ledger_json

    click.echo(ledger_json(comp.module))


# ---- emit: verified .cake → CUDA C++ / PTX / cubin / launch metadata / derived IR ----------


@main.command()
@click.argument("file")
@TARGET
@click.option("--emit", "kind", type=click.Choice(["cuda", "ptx", "cubin", "metadata", "mlir"]),
              default="cuda", show_default=True, help="What to produce.")
@click.option("-o", "output", default="-", metavar="PATH", help="Output file (default stdout).")
@click.option("--header", default=None, metavar="H",
              help="Also write a C header for a host launcher (docs/aot.md): with cuda the "
                   "launcher is appended to the .cu, with cubin/ptx the header loads the image.")
@click.option("-MD", "md", is_flag=True, help="Write a Make/Ninja depfile (PATH.d unless -MF).")
@click.option("-MF", "mf", default=None, metavar="DEPFILE", help="The depfile's path.")
@click.option("--watchdog", is_flag=True,
              help="Bound every lm.wait (docs/run.md): a hang stops the grid and is reported.")
@click.option("--watchdog-ms", default=None, type=click.FloatRange(min=1.0),
              help="The budget of one wait in milliseconds (default 1500).")
@click.option("--unchecked", is_flag=True,
              help="Emit even if a verifier gate rejects FILE (to study how it fails); the "
                   "gates' errors are printed as warnings.")
@FORMAT
def emit(file: str, target: str | None, kind: str, output: str, header: str | None, md: bool,
         mf: str | None, watchdog: bool, watchdog_ms: float | None, unchecked: bool,
         fmt: str) -> None:
    """Verify FILE, then write its code for the target (no GPU needed). Input that fails
    verification is refused with its diagnostics (exit 1), unless --unchecked."""
    from cakec import api

    deps = _aot_options(kind, output, header, md, mf)
    wd = None
    if watchdog or watchdog_ms:
        from cakec.targets.emit.watchdog import DEFAULT_BUDGET_MS, Watchdog

        wd = Watchdog(watchdog_ms or DEFAULT_BUDGET_MS)
    result = api.emit(_load(file, target), target, watchdog=wd, unchecked=unchecked)
    if result.rejected:
        from dataclasses import replace

        click.echo(f"cakec: warning: --unchecked: emitting {file} although the verifier "
                   "rejects it:", err=True)
        result.comp.sink.diagnostics[:0] = [replace(d, severity="warning")
                                            for d in result.rejected]
    comp = result.comp
    if kind == "mlir" and comp.module is not None and comp.ok:
        from cakec.ir_text import print_module

        _report([comp], fmt)
        _write(output, print_module(comp.module, locations=True, generic=False))
        return
    if _report([comp], fmt) or result.unit is None:
        sys.exit(1)
    unit = result.unit
    launcher = header_text = ""
    if kind == "cuda":
        if header:
            launcher, header_text = _host_code(file, unit, None)
        _write(output, unit.source + launcher)
    elif kind == "metadata":
        import json

        _write(output, json.dumps(unit.metadata, indent=2) + "\n")
    else:
        from cakec.targets.host.nvrtc import NvrtcError

        try:
            image = api.binary(unit, kind)
        except NvrtcError as e:  # our CUDA did not compile: a compiler bug, said so
            click.echo(f"{file}: error: NVRTC rejected the generated CUDA for {unit.target} "
                       f"[CAKE-I003]\n{e}\nhelp: this is a bug in cakec; please report it with "
                       "the input file", err=True)
            sys.exit(1)
        _write(output, image)
        if header:
            header_text = _host_code(file, unit, image)[1]
    if header:
        _write(header, header_text)
    if deps:
        from cakec import depfile

        depfile.write(deps, [o for o in (output, header) if o and o != "-"],
                      depfile.dependencies(file))


def _aot_options(kind: str, output: str, header: str | None, md: bool,
                 mf: str | None) -> str | None:
    """Check --header / -MD / -MF before compiling; the depfile path, if one is asked for."""
    if header and kind not in ("cuda", "cubin", "ptx"):
        _usage(f"--header needs --emit cuda, cubin or ptx, not {kind}")
    if (md or mf) and output == "-" and not header:
        _usage("a depfile needs an output file (-o)")
    if mf:
        return mf
    if md:
        return (output if output != "-" else header) + ".d"
    return None


def _usage(message: str) -> None:
    click.echo(f"cakec: error: {message}", err=True)
    sys.exit(2)


def _host_code(file: str, unit, image: bytes | None) -> tuple[str, str]:
    """(host code to append to the .cu, the header): the nvcc launcher when there is no
    `image`, else a header that loads the image. See docs/aot.md."""
    from cakec.targets.host import launcher

    try:
        if image is None:
            return (launcher.cuda_launcher(unit.metadata),
                    launcher.header(unit.metadata))
        return "", launcher.module_header(unit.metadata, image)
    except ValueError as e:  # metadata the C launcher cannot express: said so, no traceback
        click.echo(f"{file}: error: cannot generate the host launcher: {e}", err=True)
        sys.exit(1)


# ---- run: compile, launch on fresh inputs, check against the reference, time -----------------


@main.command()
@click.argument("file")
@TARGET
@click.option("--shape", "shape", default=None, metavar="NAME=INT,...",
              help="Problem size, e.g. M=4096,N=4096,K=4096 (default: the example's first).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the run report (docs/run.md) as one JSON document on stdout.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              hidden=True, help="Same as --json when `json`.")
@click.option("--seeds", default=3, show_default=True, type=click.IntRange(1, 100),
              help="Fresh random inputs to check the kernel on.")
@click.option("--seed", default=None, type=int, help="The first seed (default: random).")
@click.option("--watchdog/--no-watchdog", default=True, show_default=True,
              help="Bound every lm.wait (a hang becomes CAKE-R001 naming the wait).")
@click.option("--watchdog-ms", default=None, type=click.FloatRange(min=1.0),
              help="The budget of one wait in milliseconds (default 1500).")
@click.option("--timeout", "timeout_s", default=None, type=click.FloatRange(min=0.1),
              help="Seconds one launch may take before it is a hang (default 30).")
@click.option("--unchecked", is_flag=True,
              help="Run the kernel even if a verifier gate rejects it (to study how it "
                   "fails); never use its numbers.")
@click.option("--sanitize", type=click.Choice(["racecheck", "synccheck", "memcheck",
                                               "initcheck"]), default=None,
              help="Also run one launch under compute-sanitizer; reports map to .cake lines.")
@click.option("--record", "record", default=None, metavar="DIR",
              help="On a failure the verifier did not predict, write a reproducer bundle "
                   "under DIR.")
@click.option("--no-timing", is_flag=True, help="Skip the timing and speed-of-light stage.")
def run(file: str, target: str | None, shape: str | None, as_json: bool, fmt: str,
        seeds: int, seed: int | None, watchdog: bool, watchdog_ms: float | None,
        timeout_s: float | None, unchecked: bool, sanitize: str | None, record: str | None,
        no_timing: bool) -> None:
    """Compile FILE, run it on fresh random inputs from its sibling FILE.py (outputs poisoned
    with NaN), check every output element against the reference, and time it against the
    baselines. Exit status names the stage that failed (docs/run.md)."""
    from cakec.feedback import runner

    if unchecked:
        click.echo("cakec: warning: --unchecked: running a kernel the verifier may reject; "
                   "its results say how it fails, not that it works", err=True)
    report = runner.run(file, target, shape, seeds=seeds, seed=seed, watchdog=watchdog,
                        watchdog_ms=watchdog_ms or runner.DEFAULT_BUDGET_MS,
                        unchecked=unchecked, sanitize=sanitize, record=record,
                        timing=not no_timing, timeout_s=timeout_s or runner.DEFAULT_TIMEOUT_S)
    from cakec.feedback.text import render

    text = render(report)
    if as_json or fmt == "json":
        import json

        click.echo(json.dumps(report.to_json(), indent=2))
        if text.diagnostics:
            click.echo(text.diagnostics, err=True, nl=False)
    else:
        if text.diagnostics:
            click.echo(text.diagnostics, err=True, nl=False)
        click.echo(text.summary)
    if report.stage == "usage":
        click.echo(f"cakec: error: {report.reason}", err=True)
    _exit_now(report.exit_status, report.context_ok)


def _exit_now(status: int, context_ok: bool) -> None:
    """Exit; after a hang that left a kernel running, skip interpreter teardown (the CUDA
    context cannot be destroyed while its kernel spins)."""
    if context_ok:
        sys.exit(status)
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


@main.command()
@TARGET
@click.option("--lsp", is_flag=True, help="Speak the Language Server Protocol (needs pygls: "
              "pip install 'cakec[lsp]') instead of line-delimited JSON-RPC.")
def serve(target: str | None, lsp: bool) -> None:
    """Answer verify/inspect/emit requests on stdin/stdout from one warm process, or be a
    language server with --lsp (docs/serve.md)."""
    if not lsp:
        from cakec.serve.jsonrpc import serve as serve_jsonrpc

        serve_jsonrpc(sys.stdin.buffer, sys.stdout.buffer, target)
        return
    try:
        from cakec.serve.lsp import serve as serve_lsp
    except ImportError as e:
        _usage(f"`cakec serve --lsp` needs pygls ({e}); pip install 'cakec[lsp]'")
    serve_lsp(target)


if __name__ == "__main__":
    main()
