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
        from cakec.errors import CakeCompileError, CakeError

        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except CakeCompileError as e:  # its text is the rendered diagnostics
            click.echo(str(e), err=True)
            ctx.exit(e.exit_status)
        except CakeError as e:
            first, *rest = str(e).splitlines() or [type(e).__name__]
            click.echo(f"cakec: error: {first}", err=True)
            for line in rest:  # an NVRTC log, say: after the one-line summary
                click.echo(line, err=True)
            ctx.exit(e.exit_status)
        except Exception as e:  # noqa: BLE001 - a bug, said so, never a traceback
            import traceback

            tb = traceback.extract_tb(e.__traceback__)
            where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
            click.echo(f"cakec: error: internal compiler error: {type(e).__name__}: {e}{where} "
                       "[CAKE-I001]\nhelp: this is a bug in cakec; please report it with the "
                       "command line and input files", err=True)
            ctx.exit(1)


def use_color(choice: str, is_tty: bool, environ: "dict[str, str] | os._Environ[str]") -> bool:
    """--color: `always`, `never`, or `auto` (a terminal, unless NO_COLOR is set non-empty,
    https://no-color.org)."""
    if choice != "auto":
        return choice == "always"
    return is_tty and not environ.get("NO_COLOR")


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


#: An input file that cannot be read: a diagnostic of its own, so the other files of the
#: command still get theirs, in text and in JSON (exit status 2).
UNREADABLE = "CAKE-P005"


def _load(path: str):
    """The source of `path`, or a failed Compilation carrying CAKE-P005 for it."""
    from cakec.driver import Compilation, read_source
    from cakec.errors import CakeReadError

    try:
        return read_source(path)
    except CakeReadError as e:
        from cakec.diagnostics import Diagnostic, SourceFile, Span

        comp = Compilation(SourceFile(path, ""))
        comp.sink.report(Diagnostic("error", UNREADABLE, f"cannot read the file: {e.why}",
                                    Span(path, 0, 0)))
        return comp


def _unreadable(comps) -> bool:
    return any(d.code == UNREADABLE for c in comps for d in c.sink.diagnostics)


def _report(comps, fmt: str, **json_fields: object) -> int:
    """Print the compilations' diagnostics (stderr as text, or stdout as the JSON document
    with `json_fields`); the exit status they imply."""
    from cakec.diagnostics import render_json, render_text

    diags = [d for c in comps for d in c.sink.diagnostics]
    if fmt == "json":
        click.echo(render_json(diags, **json_fields))
    else:
        sources = {k: v for c in comps for k, v in c.sources.items()}
        ctx = click.get_current_context(silent=True)
        color = bool(ctx and (ctx.find_object(dict) or {}).get("color"))
        text = render_text(diags, sources, color=color)
        if text:  # click.echo would strip the styles off a non-terminal unless told
            click.echo(text, err=True, nl=False, color=color)
    return 2 if _unreadable(comps) else 1 if any(not c.ok for c in comps) else 0


def _verified(path: str, target: str | None):
    from cakec.driver import Compilation, verify_source

    src = _load(path)
    return src if isinstance(src, Compilation) else verify_source(src, target)


@main.command()
@click.argument("files", nargs=-1, required=True)
@TARGET
@FORMAT
def verify(files: tuple[str, ...], target: str | None, fmt: str) -> None:
    """Check FILES (syntax, names, types, and every verifier gate)."""
    sys.exit(_report([_verified(f, target) for f in files], fmt))


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

    src = _load(file)
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
    comp = _verified(file, target)  # derive, then the gates: a ledger only for a valid kernel
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
@FORMAT
def emit(file: str, target: str | None, kind: str, output: str, header: str | None, md: bool,
         mf: str | None, fmt: str) -> None:
    """Verify FILE, then write its code for the target (no GPU needed). Input that fails
    verification is refused with its diagnostics (exit 1)."""
    from cakec import api
    from cakec.driver import Compilation

    deps = _aot_options(kind, output, header, md, mf)
    src = _load(file)
    if isinstance(src, Compilation):
        _finish(src, fmt, output, None)
    result = api.emit(src, target)
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
@FORMAT
def run(file: str, target: str | None, shape: str | None, fmt: str) -> None:
    """Compile FILE, run it on fresh random inputs from its sibling FILE.py, check every output
    element against the reference, and time it against the baselines (one line of facts)."""
    from cakec import api

    try:
        facts = api.run_example(file, target, shape)
    except api.CakeCompileError as e:
        if fmt != "json":
            raise  # the CLI prints its diagnostics
        from cakec.diagnostics import render_json

        click.echo(render_json(e.diagnostics, output=None))
        sys.exit(1)
    if fmt == "json":
        from cakec.diagnostics import render_json

        click.echo(render_json([], output=facts))
    else:
        click.echo(api.facts_line(facts))
    sys.exit(0 if facts["correct"] else 1)


if __name__ == "__main__":
    main()
