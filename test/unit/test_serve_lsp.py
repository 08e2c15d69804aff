"""`cakec serve --lsp` end to end: a real LSP session (Content-Length framed JSON-RPC over
the stdio of a `cakec serve --lsp` subprocess) — initialize, diagnostics as the text
changes, hover with the ledger, go-to-definition, shutdown and exit."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")

from cakec.diagnostics import Diagnostic, Span  # noqa: E402
from cakec.serve.positions import Positions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "examples" / "gemm_bf16.cake"
TEXT = GEMM.read_text()
URI = GEMM.as_uri()
TIMEOUT = 60


class LspClient:
    """Frames, sends and reads LSP messages; notifications are queued apart from replies."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "cakec.cli", "serve", "--lsp"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=ROOT)
        self.replies: dict[int, dict] = {}
        self.inbox: queue.Queue[dict] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            headers: dict[str, str] = {}
            while (line := out.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            if not headers:
                return
            self.inbox.put(json.loads(out.read(int(headers["content-length"]))))

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> dict:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)

    def wait(self, match) -> dict:
        """The next message that `match`es; messages skipped on the way are dropped."""
        while True:
            message = self.inbox.get(timeout=TIMEOUT)
            if match(message):
                return message

    def diagnostics(self, version: int) -> list[dict]:
        m = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"].get("version") == version)
        assert m["params"]["uri"] == URI
        return m["params"]["diagnostics"]


def _at(line: int, col: int) -> dict:
    """Our 1-based line:col as an LSP position."""
    return {"textDocument": {"uri": URI}, "position": {"line": line - 1, "character": col - 1}}


def _range(line: int, col: int, end_col: int) -> dict:
    return {"start": {"line": line - 1, "character": col - 1},
            "end": {"line": line - 1, "character": end_col - 1}}


@pytest.fixture
def client():
    c = LspClient()
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


def test_lsp_session(client: LspClient) -> None:
    init = client.request("initialize", {"processId": None, "rootUri": ROOT.as_uri(),
                                         "capabilities": {}})["result"]
    caps = init["capabilities"]
    assert caps["hoverProvider"] and caps["definitionProvider"]
    assert init["serverInfo"]["name"] == "cakec"
    client.notify("initialized", {})

    # A typo in a barrier name: T001 at exactly the misspelt name.
    broken = TEXT.replace("lm.wait(full, stage=s)", "lm.wait(ful, stage=s)")
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": URI, "languageId": "cake", "version": 1, "text": broken}})
    [d] = client.diagnostics(1)
    assert (d["code"], d["severity"], d["source"]) == ("CAKE-T001", 1, "cakec")
    assert d["range"] == _range(55, 25, 28)
    assert d["message"] == "undefined name `ful`\nhelp: did you mean `full`?"

    # A whole-document change to a protocol error: its note becomes relatedInformation.
    wrong_count = TEXT.replace("init_count=2, pipeline=pipe)", "init_count=3, pipeline=pipe)")
    client.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                             "contentChanges": [{"text": wrong_count}]})
    [d] = client.diagnostics(2)
    assert d["code"] == "CAKE-S007" and d["range"]["start"] == {"line": 29, "character": 11}
    [note] = d["relatedInformation"]
    assert note["message"] == "`full` is completed here"
    assert note["location"] == {"uri": URI, "range": _range(44, 17, 74)}

    # Undo it with an incremental edit: no diagnostics.
    line = TEXT.splitlines()[29]
    col = line.index("init_count=2") + len("init_count=")
    client.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 3},
                                             "contentChanges": [{"range": _range(30, col + 1,
                                                                                 col + 2),
                                                                 "text": "2"}]})
    assert client.diagnostics(3) == []

    # Hover: the derived ledger of a barrier (its waits' parities) and of a TMA load.
    hover = client.request("textDocument/hover", _at(55, 26))["result"]
    assert hover["contents"]["kind"] == "markdown"
    assert hover["range"] == _range(55, 25, 29)
    text = hover["contents"]["value"]
    assert text.startswith("**barrier `full` · line 30**")
    assert '"tx_bytes_per_phase": 49152' in text and '"initial_parity": 0' in text
    tma = client.request("textDocument/hover", _at(44, 22))["result"]["contents"]["value"]
    assert '"box": [128, 64]' in tma and '"coords": ["k*64", "m_tile*128"]' in tma
    assert client.request("textDocument/hover", _at(1, 3))["result"] is None  # a comment

    # Go to definition: a barrier, a view, a role; and a loop local in the right role.
    for use, decl in (((55, 26), (30, 5, 9)), ((56, 36), (25, 5, 7)), ((47, 11), (28, 5, 9)),
                      ((56, 39), (54, 17, 18))):
        loc = client.request("textDocument/definition", _at(*use))["result"]
        assert loc == {"uri": URI, "range": _range(*decl)}, use
    assert client.request("textDocument/definition", _at(1, 1))["result"] is None

    assert client.request("shutdown", None)["result"] is None
    client.notify("exit", None)
    assert client.proc.wait(timeout=TIMEOUT) == 0
    assert client.proc.stderr is not None
    assert "Traceback" not in client.proc.stderr.read().decode()


def test_target_option_overrides_the_kernels_own(client: LspClient) -> None:
    client.request("initialize", {"processId": None, "capabilities": {},
                                  "initializationOptions": {"target": "sm_90a"}})
    client.notify("initialized", {})
    seed = (ROOT / "examples" / "seed_fragment.cake").read_text()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": URI, "languageId": "cake", "version": 1, "text": seed}})
    assert [d["code"] for d in client.diagnostics(1)] == ["CAKE-H001"]
    client.request("shutdown", None)
    client.notify("exit", None)
    assert client.proc.wait(timeout=TIMEOUT) == 0


def test_columns_are_utf16_code_units_both_ways() -> None:
    from pygls.workspace import PositionCodec
    from lsprotocol import types as lsp

    pos = Positions(PositionCodec(), "x = 1\na\U0001d523bc = 2\n")  # 𝔣: two UTF-16 units
    r = pos.span_range(Span("f", 2, 3, 2, 5))  # `bc`, code points 3..5
    assert (r.start.line, r.start.character, r.end.character) == (1, 3, 5)
    assert pos.server(lsp.Position(1, 3)) == (2, 3)


def test_a_diagnostic_without_a_place_sits_at_the_top() -> None:
    from pygls.workspace import PositionCodec

    from cakec.serve.lsp import _diagnostic

    d = Diagnostic("error", "CAKE-I001", "internal compiler error", None,
                   help="this is a bug in cakec")
    lsp_d = _diagnostic(d.to_json(), URI, Positions(PositionCodec(), TEXT))
    assert (lsp_d.range.start.line, lsp_d.range.end.character) == (0, 0)
    assert lsp_d.code == "CAKE-I001" and lsp_d.message.endswith("help: this is a bug in cakec")
