"""The robustness fuzzer (issue 17): damaged versions of every example and corpus kernel go
through `cakec verify` and `cakec emit --emit cuda` in-process, for the kernel's own target
and for a `--target` override, and each run must end as a user-facing answer: exit status 0
or 1, no Python exception escaping the CLI, no internal error (CAKE-I…). What verifies must
also emit (docs/diagnostics.md, "verify implies emit"): an emit that fails after a clean
verify is a failure too.

Shared by the CI test (test/unit/test_fuzz.py, hypothesis, bounded) and the long run
(bench/fuzz.py, seeded random, counts per 1000 inputs). A mutation is a pure function of
the text and a `random.Random`, so every input is reproducible from (kernel, seed).
"""

from __future__ import annotations

import random
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kernel_files import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
KERNELS = EXAMPLES

_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_OPERATOR = re.compile(r"//|==|!=|<=|>=|\*\*|[-+*%<>]")
#: Numbers that probe the edges: zero, one, powers of two around i32/i64 and the hardware's
#: counters, and a literal no integer type holds.
_EDGE_NUMBERS = ("0", "1", "2", "3", "7", "64", "65", "129", "255", "256", "257", "1024",
                 "1048576", "2147483647", "2147483648", "4294967296", "9223372036854775808",
                 "99999999999999999999", "-1")
_OPERATORS = ("+", "-", "*", "//", "%", "**", "<", "<=", "==", "!=", ">", ">=", "/", "and", "or")
#: Words an author might write that Cake reserves or rejects.
_WORDS = ("return", "break", "continue", "lambda", "None", "True", "False", "pass", "if",
          "lm", "LM", "cake", "self", "stage", "range", "print")


def _sub_one(pattern: re.Pattern[str], text: str, rnd: random.Random,
             replace: Callable[[str], str]) -> str | None:
    matches = list(pattern.finditer(text))
    if not matches:
        return None
    m = rnd.choice(matches)
    return text[:m.start()] + replace(m.group(0)) + text[m.end():]


def number(text: str, rnd: random.Random) -> str | None:
    def new(old: str) -> str:
        n = int(old)
        return rnd.choice([*_EDGE_NUMBERS, str(n + 1), str(max(n - 1, 0)), str(n * 2),
                           str(n // 2), str(n * 1000)])
    return _sub_one(_NUMBER, text, rnd, new)


def name(text: str, rnd: random.Random) -> str | None:
    names = sorted(set(_NAME.findall(text)))

    def new(old: str) -> str:
        kind = rnd.randrange(4)
        if kind == 0:
            return rnd.choice(names)  # another name of the same file
        if kind == 1:
            return rnd.choice(_WORDS)
        if kind == 2 and len(old) > 1:  # a typo: one character dropped
            i = rnd.randrange(len(old))
            return old[:i] + old[i + 1:]
        return old + rnd.choice(["_", "s", "2"])
    return _sub_one(_NAME, text, rnd, new)


def operator(text: str, rnd: random.Random) -> str | None:
    return _sub_one(_OPERATOR, text, rnd, lambda old: rnd.choice(_OPERATORS))


def _code_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]


def delete_line(text: str, rnd: random.Random) -> str | None:
    lines = text.split("\n")
    code = _code_lines(lines)
    if not code:
        return None
    del lines[rnd.choice(code)]
    return "\n".join(lines)


def duplicate_line(text: str, rnd: random.Random) -> str | None:
    lines = text.split("\n")
    code = _code_lines(lines)
    if not code:
        return None
    i = rnd.choice(code)
    lines.insert(i + rnd.choice([0, 1, 2]), lines[i])
    return "\n".join(lines)


def swap_lines(text: str, rnd: random.Random) -> str | None:
    lines = text.split("\n")
    code = _code_lines(lines)
    if len(code) < 2:
        return None
    i = rnd.choice(code[:-1])
    j = code[code.index(i) + 1] if rnd.random() < 0.7 else rnd.choice(code)
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def characters(text: str, rnd: random.Random) -> str | None:
    """Byte-level damage: a character dropped, repeated or replaced by punctuation."""
    if not text:
        return None
    i = rnd.randrange(len(text))
    kind = rnd.randrange(3)
    if kind == 0:
        return text[:i] + text[i + 1:]
    if kind == 1:
        return text[:i] + text[i] + text[i:]
    return text[:i] + rnd.choice("()[]{},:=.\t\n #'\"\\@") + text[i + 1:]


OPERATORS: dict[str, Callable[[str, random.Random], str | None]] = {
    "number": number, "name": name, "operator": operator, "delete_line": delete_line,
    "duplicate_line": duplicate_line, "swap_lines": swap_lines, "characters": characters,
}


def mutate(text: str, seed: int, steps: int = 0,
           ops: tuple[str, ...] = ()) -> tuple[str, list[str]]:
    """`text` damaged by 1-3 operators drawn from `seed` (or exactly `steps` of them), from
    all of OPERATORS or only those named in `ops`."""
    rnd = random.Random(seed)
    applied: list[str] = []
    names = sorted(ops or OPERATORS)
    for _ in range(steps or rnd.choice([1, 1, 1, 2, 3])):
        op = rnd.choice(names)
        new = OPERATORS[op](text, rnd)
        if new is not None:
            text = new
            applied.append(op)
    return text, applied


# ---- the oracle ---------------------------------------------------------------------------------

#: The name of each kernel of a file (`@cake.schedule(...)` then `def NAME(`).
_KERNEL_NAME = re.compile(r"^@cake\.schedule\b.*\n\s*def\s+(\w+)", re.MULTILINE)


@dataclass
class Outcome:
    """What one input did; `failure` is None when every run was a user-facing answer."""

    verified: bool
    failure: str | None


def check(text: str, target: str | None) -> Outcome:
    """`cakec verify` (text and JSON) and, when it verifies, `cakec emit --emit cuda`, through
    the real CLI in-process (click's runner), on `text` written to a file."""
    from click.testing import CliRunner

    from cakec.cli import main

    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.cake"
        path.write_text(text, encoding="utf-8")
        extra = ["--target", target] if target else []
        # a file of several kernels emits each by name (one translation unit per kernel)
        names = _KERNEL_NAME.findall(text)
        emits = [["emit", str(path), "--emit", "cuda", "-o", str(Path(tmp) / "k.cu"), *extra,
                  *(["--kernel", n] if len(names) > 1 else [])] for n in names[:4] or [""]]
        verified = False
        for args in (["verify", str(path), *extra],
                     ["verify", str(path), "--format", "json", *extra], *emits):
            if args[0] == "emit" and not verified:
                break  # emit of input that fails to verify only repeats verify's report
            result = runner.invoke(main, args, catch_exceptions=True)
            out = result.output.replace(str(path), path.name)
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                return Outcome(verified, f"{' '.join(args[:1])}: uncaught "
                               f"{type(result.exception).__name__}: {result.exception}")
            if result.exit_code not in (0, 1):
                return Outcome(verified, f"{args[0]}: exit status {result.exit_code}: {out[-300:]}")
            internal = re.search(r"CAKE-I\d{3}", out)
            if internal:
                line = next(ln for ln in out.splitlines() if internal.group(0) in ln)
                return Outcome(verified, f"{args[0]}: {line.strip()[:400]}")
            if "Traceback" in out:
                return Outcome(verified, f"{args[0]}: a traceback in the output")
            if args[0] == "verify" and "--format" not in args:
                verified = result.exit_code == 0
            elif args[0] == "emit" and result.exit_code != 0:
                first = out.strip().splitlines()[0] if out.strip() else ""
                return Outcome(verified, f"emit failed after verify passed: {first[:400]}")
    return Outcome(verified, None)
