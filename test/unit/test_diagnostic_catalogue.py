"""The diagnostics catalogue (docs/diagnostics.md and docs/diagnostics/*.md) against the code:
every code the compiler can emit is documented, every entry has an example and a fix, every
documented code is pinned by a lit test, and the examples of syntax-and-names.md are run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cakec.diagnostics import SourceFile, render_text
from cakec.driver import verify_source

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "docs" / "diagnostics.md"
PAGES = sorted((ROOT / "docs" / "diagnostics").glob("*.md"))
SYNTAX_PAGE = ROOT / "docs" / "diagnostics" / "syntax-and-names.md"
SOURCE_DIRS = ("cakec", "passes", "targets", "dialects")
CODE = re.compile(r"CAKE-[PTSHDIR][0-9]{3}")
HEADING = re.compile(r"^##+ (CAKE-[PTSHDIR][0-9]{3})\b", re.M)
INDEX_ROW = re.compile(r"^\| (CAKE-[PTSHDIR][0-9]{3}) \|", re.M)
DIRECTIVE = re.compile(r"^\s*(?:#|//)\s*([A-Z][A-Z0-9_]*(?:-[A-Z]+)?):(.*)$", re.M)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)

#: Documented codes no lit test can pin from a .cake or .mlir input, and where they are
#: tested instead. An entry that a lit test comes to pin fails the check: the list shrinks.
NOT_PINNABLE = {
    "CAKE-H011": "re-checks an attribute derive-tmem records (test/unit/test_gates_hd.py)",
    "CAKE-H013": "guards TMA tensor ranks the surface language cannot write "
                 "(test/unit/test_gates_hd.py)",
    "CAKE-I002": "internal: a broken pass contract seen by the emitter (test/unit/test_emit.py)",
    "CAKE-I003": "internal: NVRTC rejecting the generated CUDA",
    # The runtime family needs a GPU run (test/unit/test_run_report.py renders them from
    # device records and sanitizer logs; docs/run.md has the H200 results).
    **{code: "runtime: reported by `cakec run` on a GPU (test/unit/test_run_report.py)"
       for code in ("CAKE-R001", "CAKE-R002", "CAKE-R010", "CAKE-R011", "CAKE-R012",
                    "CAKE-R013")},
}


def source_codes() -> dict[str, list[str]]:
    """code -> the files that mention it."""
    found: dict[str, list[str]] = {}
    for d in SOURCE_DIRS:
        for path in sorted((ROOT / d).rglob("*.py")):
            for code in set(CODE.findall(path.read_text(encoding="utf-8"))):
                found.setdefault(code, []).append(str(path.relative_to(ROOT)))
    return found


def sections() -> dict[str, tuple[Path, str]]:
    """code -> (page, the text of its entry up to the next heading)."""
    out: dict[str, tuple[Path, str]] = {}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        marks = list(HEADING.finditer(text))
        for m in marks:
            end = text.find("\n## ", m.end())
            out[m.group(1)] = (page, text[m.start():end if end >= 0 else len(text)])
    return out


def documented() -> set[str]:
    return set(sections()) | set(INDEX_ROW.findall(INDEX.read_text(encoding="utf-8")))


def lit_pins() -> set[str]:
    """Codes that a FileCheck directive of some lit test expects to see."""
    pinned: set[str] = set()
    for path in (ROOT / "test" / "lit").rglob("*"):
        if path.suffix not in (".cake", ".mlir", ".test") or "Output" in path.parts:
            continue
        for prefix, body in DIRECTIVE.findall(path.read_text(encoding="utf-8")):
            if prefix in ("RUN", "REQUIRES", "UNSUPPORTED", "XFAIL") or prefix.endswith("-NOT"):
                continue
            pinned.update(CODE.findall(body))
    return pinned


def test_the_source_emits_codes_of_every_family_page() -> None:
    # Guards the scan itself: if it found nothing, every other check would pass vacuously.
    codes = source_codes()
    assert {"CAKE-P001", "CAKE-T001", "CAKE-I001"} <= set(codes)
    assert {p.name for p in PAGES} >= {"syntax-and-names.md"}


def test_every_code_in_the_source_is_documented() -> None:
    docs = documented()
    missing = {c: files for c, files in source_codes().items() if c not in docs}
    assert not missing, "codes without an entry in docs/diagnostics*: " + "; ".join(
        f"{c} ({', '.join(files)})" for c, files in sorted(missing.items()))


def test_every_entry_has_an_example_and_a_fix() -> None:
    problems = []
    for code, (page, text) in sorted(sections().items()):
        if not FENCE.search(text):
            problems.append(f"{code} in {page.name}: no example")
        if code[5] != "I" and "Fixed" not in text:
            problems.append(f"{code} in {page.name}: no `Fixed:`")
    assert not problems, problems


def test_every_documented_code_is_pinned_by_a_lit_test() -> None:
    pins = lit_pins()
    missing = sorted(documented() - pins - set(NOT_PINNABLE))
    assert not missing, f"documented codes no lit CHECK line expects: {missing}"
    stale = sorted(c for c in NOT_PINNABLE if c in pins)
    assert not stale, f"now pinned by a lit test, remove from NOT_PINNABLE: {stale}"


def _entries(page: Path) -> list[tuple[str, list[tuple[str, str]]]]:
    text = page.read_text(encoding="utf-8")
    marks = list(HEADING.finditer(text))
    out = []
    for m, nxt in zip(marks, [*marks[1:], None]):
        body = text[m.end():nxt.start() if nxt else len(text)]
        out.append((m.group(1), FENCE.findall(body)))
    return out


@pytest.mark.parametrize("code,blocks", _entries(SYNTAX_PAGE),
                         ids=[c for c, _ in _entries(SYNTAX_PAGE)])
def test_syntax_and_names_examples_print_what_the_page_shows(code: str,
                                                             blocks: list[tuple[str, str]]) -> None:
    if code == "CAKE-I001":  # no input is meant to trigger it (see test_api.py)
        assert [lang for lang, _ in blocks] == ["text"]
        return
    (lang, bad), (out_lang, shown), (fixed_lang, fixed) = blocks
    assert lang in ("python", "mlir") and out_lang == "text" and fixed_lang == lang
    name = "k.mlir" if lang == "mlir" else "k.cake"
    comp = verify_source(SourceFile(name, bad))
    assert code in {d.code for d in comp.sink.diagnostics}
    assert render_text(comp.sink.diagnostics, {name: comp.source}) == shown
    fixed_comp = verify_source(SourceFile(name, fixed))
    assert fixed_comp.sink.diagnostics == [], render_text(fixed_comp.sink.diagnostics,
                                                          {name: fixed_comp.source})


def test_cakec_explain_knows_every_documented_code() -> None:
    from cakec.explain import explanation, normalise

    missing = sorted(c for c in documented() if explanation(c) is None)
    assert not missing, f"codes `cakec explain` cannot explain: {missing}"
    assert normalise("s001") == normalise("CAKE-S001") == "CAKE-S001"
    assert normalise("S1") is None and explanation("CAKE-S999") is None
