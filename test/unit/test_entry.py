"""cakec/__main__.py: the `cakec` command runs a plain `cakec verify` without click, with the
same output and exit status as the click command; every other command line goes to click."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cakec.__main__ import plain_verify

ROOT = Path(__file__).resolve().parents[2]
CANONICAL = str(ROOT / "examples" / "seed_fragment.cake")
BAD = str(ROOT / "test" / "lit" / "frontend" / "several_errors.cake")


@pytest.mark.parametrize("args", [
    ["verify", CANONICAL],
    ["verify", BAD],
    ["--color=always", "verify", BAD],
    ["--color", "never", "verify", "--format", "json", BAD, CANONICAL],
    ["verify", str(ROOT / "no_such_file.cake"), BAD],
    ["verify", "--target", "sm_90a", CANONICAL],
    ["verify", "--target=sm_100a", CANONICAL, "--format=text"],
])
def test_plain_verify_answers_as_the_click_command(args: list[str]) -> None:
    fast, slow = (subprocess.run([sys.executable, "-m", module, *args], capture_output=True,
                                 text=True, cwd=ROOT) for module in ("cakec", "cakec.cli"))
    assert plain_verify(args) is not None
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout,
                                                           slow.stderr)


@pytest.mark.parametrize("args", [
    [], ["verify"], ["verify", "--", "a.cake"], ["verify", "-h"], ["--version"],
    ["verify", "--bogus", "a.cake"], ["verify", "--target", "sm_91", "a.cake"],
    ["verify", "--target", "sm_90a", "--target", "sm_100a", "a.cake"],
    ["verify", "a.cake", "--format"], ["verify", "--format", "yaml", "a.cake"],
    ["--color", "sometimes", "verify", "a.cake"], ["verify", "--color", "always", "a.cake"],
    ["emit", "a.cake"], ["frobnicate"],
])
def test_other_command_lines_go_to_click(args: list[str]) -> None:
    assert plain_verify(args) is None


def test_plain_verify_imports_no_click() -> None:
    code = ("import sys\nsys.argv = ['cakec', 'verify', sys.argv[1]]\n"
            "from cakec.__main__ import main\ntry:\n    main()\nexcept SystemExit as e:\n"
            "    print(e.code, 'click' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code, CANONICAL], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["0", "False"]
