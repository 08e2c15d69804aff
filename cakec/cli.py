"""`cakec`: the command-line driver.

Exit status: 0 no errors (warnings allowed), 1 errors in the input, 2 usage or I/O
problems. No command ends in a Python traceback: a `cakec.CakeError` is one line and its
exit status, anything else an internal error (CAKE-I001). With `--format json` stdout holds
exactly one JSON document (docs/diagnostics.md). Heavy modules (xDSL, NVRTC, torch) are
imported inside the commands that need them so that `cakec --help` and `cakec verify`
start fast.
"""

from __future__ import annotations

import os
import sys

import click

from cakec import __version__
from cakec.cli_core import failure, load, report, use_color, verified

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


class _Cli(click.Group):
    """Turns what escapes a command into one line on stderr and an exit status."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as e:  # noqa: BLE001 - a CakeError's line, or a bug said so
            text, status = failure(e)
            click.echo(text, err=True)
            ctx.exit(status)


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cakec")
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]),
              default="auto", show_default=True,
              help="Colour text diagnostics (auto: on a terminal, unless NO_COLOR is set).")
@click.option("--cmake-dir", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_cmake_dir,
              help="Print the directory of CakeConfig.cmake (for -DCake_DIR=) and exit.")
@click.pass_context
def main(ctx: click.Context, color: str) -> None:
    """Cake: a verified schedule language and compiler for warp-specialized GPU kernels."""
    ctx.obj = {"color": use_color(color, sys.stderr.isatty(), os.environ)}


def _report(comps, fmt: str, **json_fields: object) -> int:
    """Print the compilations' diagnostics (stderr as text, or stdout as the JSON document
    with `json_fields`); the exit status they imply."""
    ctx = click.get_current_context(silent=True)
    color = bool(ctx and (ctx.find_object(dict) or {}).get("color"))
    document, text, status = report(comps, fmt, color, **json_fields)
    if document is not None:
        click.echo(document)
    if text:  # click.echo would strip the styles off a non-terminal unless told
        click.echo(text, err=True, nl=False, color=color)
    return status


@main.command()
@click.argument("files", nargs=-1, required=True)
@TARGET
@FORMAT
def verify(files: tuple[str, ...], target: str | None, fmt: str) -> None:
    """Check FILES (syntax, names, types, and every verifier gate)."""
    sys.exit(_report([verified(f, target) for f in files], fmt))


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
    from cakec.driver import Compilation, build, run_passes

    src = load(file)
    comp = src if isinstance(src, Compilation) else build(src, target)
    try:
        run_passes(comp, pipeline)
    except ValueError as e:
        _usage(str(e))
    text = None
    if comp.ok and comp.module is not None:
        from cakec.ir_text import print_module

        text = print_module(comp.module, locations=print_loc, generic=generic)
    _finish(comp, fmt, output, text)


def _finish(comp, fmt: str, output: str, artifact: str | bytes | None) -> None:
    """Report, then write the artifact to `output`; in JSON mode an artifact for stdout
    travels inside the document (`output`), so stdout stays one JSON value."""
    inline = fmt == "json" and output == "-"
    if inline and isinstance(artifact, bytes):
        _usage("binary output with --format json needs -o PATH")
    status = _report([comp], fmt, **({"output": artifact if comp.ok else None}
                                     if inline else {}))
    if status or artifact is None:
        sys.exit(status or 1)
    if not inline:
        _write(output, artifact)


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
@click.argument("code")
def explain(code: str) -> None:
    """Print the long explanation of a diagnostic CODE (e.g. CAKE-S001 or S001): what is
    wrong, a bad example, what cakec prints for it, and the fix."""
    from cakec.explain import explanation, normalise

    name = normalise(code)
    text = explanation(name) if name else None
    if text is None:
        _usage(f"`{code}` is not a documented diagnostic code; codes look like CAKE-S001 "
               "(docs/diagnostics.md lists them)")
    click.echo(text, nl=False)


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
    comp = verified(file, target)  # derive, then the gates: a ledger only for a valid kernel
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
@click.option("--kernel", default=None, metavar="NAME",
              help="The kernel to emit from a file of several (each is its own translation "
                   "unit).")
@FORMAT
def emit(file: str, target: str | None, kind: str, output: str, header: str | None, md: bool,
         mf: str | None, watchdog: bool, watchdog_ms: float | None, unchecked: bool,
         kernel: str | None, fmt: str) -> None:
    """Verify FILE, then write its code for the target (no GPU needed). Input that fails
    verification is refused with its diagnostics (exit 1), unless --unchecked."""
    from cakec import api
    from cakec.driver import Compilation

    deps = _aot_options(kind, output, header, md, mf)
    src = load(file)
    if isinstance(src, Compilation):
        _finish(src, fmt, output, None)
    wd = None
    if watchdog or watchdog_ms:
        from cakec.targets.emit.watchdog import DEFAULT_BUDGET_MS, Watchdog

        wd = Watchdog(watchdog_ms or DEFAULT_BUDGET_MS)
    result = api.emit(src, target, watchdog=wd, unchecked=unchecked, kernel=kernel)
    if result.rejected:
        from dataclasses import replace

        click.echo(f"cakec: warning: --unchecked: emitting {file} although the verifier "
                   "rejects it:", err=True)
        result.comp.sink.diagnostics[:0] = [replace(d, severity="warning")
                                            for d in result.rejected]
    comp, unit = result.comp, result.unit
    artifact: str | bytes | None = None
    header_text = ""
    if kind == "mlir" and comp.module is not None and comp.ok:
        from cakec.ir_text import print_module

        artifact = print_module(comp.module, locations=True, generic=False)
    elif unit is None:
        pass
    elif kind == "cuda":
        launcher = ""
        if header:
            launcher, header_text = _host_code(file, unit, None)
        artifact = unit.source + launcher
    elif kind == "metadata":
        import json

        artifact = json.dumps(unit.metadata, indent=2) + "\n"
    else:
        from cakec.targets.host.nvrtc import NvrtcError

        try:
            artifact = api.binary(unit, kind)
        except NvrtcError as e:  # our CUDA did not compile: a compiler bug, said so
            from cakec.diagnostics import Diagnostic, Note, Span

            comp.sink.report(Diagnostic(
                "error", "CAKE-I003", f"NVRTC rejected the generated CUDA for {unit.target}",
                Span(file, 0, 0), [Note(None, str(e))],
                help="this is a bug in cakec; please report it with the input file"))
        if header and isinstance(artifact, bytes):
            header_text = _host_code(file, unit, artifact)[1]
    _finish(comp, fmt, output, artifact)
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
@click.option("--kernel", default=None, metavar="NAME",
              help="The kernel to run from a file of several.")
def run(file: str, target: str | None, shape: str | None, as_json: bool, fmt: str,
        seeds: int, seed: int | None, watchdog: bool, watchdog_ms: float | None,
        timeout_s: float | None, unchecked: bool, sanitize: str | None, record: str | None,
        no_timing: bool, kernel: str | None) -> None:
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
                        timing=not no_timing, timeout_s=timeout_s or runner.DEFAULT_TIMEOUT_S,
                        kernel=kernel)
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


@main.command()
@click.argument("entry", type=click.Choice(["gemm", "kmeans_assign"]))
@click.option("--out", "out", type=click.Path(), default=None,
              help="Write the table here (a folder or a .json file) instead of over the "
                   "shipped one; point CAKEC_ROUTES_DIR at a folder to use it.")
@click.option("--quick", is_flag=True, help="Time every fourth shape of the set only.")
@click.option("--measured", "measured", type=click.Path(exists=True, dir_okay=False),
              default=None, help="Time nothing: choose the rules again from the timings a "
                                 "previous run saved (ENTRY_measured.json; no GPU needed).")
@click.option("--adopt", "adopt", default=None, metavar="ROUTE[,ROUTE...]",
              help="Keep the shipped rules; each listed route takes a rule only where it "
                   "measured faster than the rule's route over the shapes that rule serves.")
def tune(entry: str, out: str | None, quick: bool, measured: str | None,
         adopt: str | None) -> None:
    """Time ENTRY's candidate routes on this GPU over its shape set and rewrite its route
    table from the timings (saved beside it as ENTRY_measured.json), printing the route
    chosen per shape bucket (needs torch and an sm_90 GPU, except with --measured;
    docs/kernels.md)."""
    from pathlib import Path

    from cakec.errors import CakeToolkitError

    adopted = [r for r in adopt.split(",") if r] if adopt else None
    if measured is not None:
        from cakec.runtime.tuning import rechoose

        written = rechoose(entry, Path(measured), Path(out) if out else None, click.echo,
                           adopted)
        click.echo(f"wrote {written}")
        return
    try:
        import torch
    except ImportError:
        raise CakeToolkitError("cakec tune needs torch (and an sm_90 GPU) to time the "
                               "routes") from None
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        raise CakeToolkitError("cakec tune needs an sm_90 GPU: the shipped route tables are "
                               "for sm_90a")
    from cakec.kernels import tune as tuner

    written = tuner.tune(entry, Path(out) if out else None, quick, click.echo, adopted)
    click.echo(f"wrote {written}")
