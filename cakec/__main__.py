"""The `cakec` command (and `python -m cakec`): a plain `cakec verify` without click.

Importing click costs a fresh process about 5 % of `cakec verify` (50 M of 930 M
instructions, 2026-12-04), so the entry point reads the commonest command line itself:
`[--color WHEN] verify FILE... [--target SKU] [--format text|json]`, each option at most
once, every value valid. It runs it as the click command does (cakec/cli_core.py: the same
diagnostics, output and exit status); any other command line, including every mistake, goes
to the click CLI (cakec/cli.py), which answers it as before.

Start-up allocates some 10⁶ objects and frees almost none: the cyclic garbage collector
walks them again and again for nothing (~4 % of the process). A plain verify keeps it off
until the first file is verified (the pipeline's modules are imported by then), then
freezes what exists and turns it on again.
"""

from __future__ import annotations

import gc
import os
import sys

_OPTIONS = ("--target", "--format")
_FORMATS = ("text", "json")
_COLORS = ("auto", "always", "never")


def _option(args: list[str], i: int, names: tuple[str, ...]) -> tuple[str, str, int] | None:
    """The option at `args[i]` (`--name value` or `--name=value`) as (name, value, next
    index), or None when it is none of `names` or lacks its value."""
    name, eq, value = args[i].partition("=")
    if name not in names:
        return None
    if not eq:
        if i + 1 == len(args):
            return None
        value, i = args[i + 1], i + 1
    return name, value, i + 1


def plain_verify(args: list[str]) -> tuple[list[str], str | None, str, str] | None:
    """(files, target, format, --color) of a plain `cakec verify` command line, else None."""
    color, i = "auto", 0
    if args and args[0].startswith("--color"):
        opt = _option(args, 0, ("--color",))
        if opt is None or opt[1] not in _COLORS:
            return None
        color, i = opt[1], opt[2]
    if args[i:i + 1] != ["verify"]:
        return None
    files: list[str] = []
    given: dict[str, str] = {}
    i += 1
    while i < len(args):
        if args[i] == "-" or not args[i].startswith("-"):
            files.append(args[i])
            i += 1
            continue
        opt = _option(args, i, _OPTIONS)
        if opt is None or opt[0] in given:
            return None
        name, value, i = opt
        given[name] = value
    fmt, target = given.get("--format", "text"), given.get("--target")
    if not files or fmt not in _FORMATS or (target is not None and not _known_target(target)):
        return None
    return files, target, fmt, color


def _known_target(target: str) -> bool:
    from cakec.targets.sku import SKUS

    return target in SKUS


def _plain_streams() -> bool:
    """Whether stdout and stderr take any text as they are (click rewraps a stream whose
    encoding is ASCII; the click path answers then)."""
    import codecs

    try:
        return all(codecs.lookup(getattr(s, "encoding", None) or "ascii").name != "ascii"
                   for s in (sys.stdout, sys.stderr))
    except LookupError:
        return False


def _write(stream, text: str) -> None:  # noqa: ANN001 - a text stream
    stream.write(text)
    stream.flush()


def _strip_styles(text: str) -> str:
    """`text` without ANSI control sequences (ECMA-48 CSI), as click prints text to a
    stream when colour is off."""
    import re

    return re.sub(r"\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]", "", text)


def run_verify(files: list[str], target: str | None, fmt: str, color_choice: str) -> int:
    """`cakec verify`'s work and output, as the click command does them; the exit status."""
    from cakec import cli_core

    color = cli_core.use_color(color_choice, sys.stderr.isatty(), os.environ)
    try:
        comps = []
        for path in files:
            comps.append(cli_core.verified(path, target))
            if not gc.isenabled():
                gc.freeze()  # start-up's objects: never garbage, never walked again
                gc.enable()
        document, text, status = cli_core.report(comps, fmt, color)
        if document is not None:
            _write(sys.stdout, document + "\n")
        if text:
            _write(sys.stderr, text if color else _strip_styles(text))
        return status
    except KeyboardInterrupt:
        _write(sys.stderr, "\nAborted!\n")
        return 1
    except Exception as e:  # noqa: BLE001 - a CakeError's line, or a bug said so
        text, status = cli_core.failure(e)
        _write(sys.stderr, text + "\n")
        return status


def main() -> None:
    """The `cakec` command."""
    gc.disable()
    args = sys.argv[1:]
    plain = None
    if "_CAKEC_COMPLETE" not in os.environ and _plain_streams():
        plain = plain_verify(args)
    if plain is None:
        gc.enable()
        from cakec.cli import main as cli

        cli()
        return
    sys.exit(run_verify(*plain))


if __name__ == "__main__":
    main()
