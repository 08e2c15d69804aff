"""`cakec serve`: a JSON-RPC session over a real subprocess's stdio, and the contract that
its answers are the CLI's (`verify --format json`, `inspect`, `emit`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "examples" / "gemm_bf16.cake"
BROKEN = GEMM.read_text().replace("lm.wait(full, stage=s)", "lm.wait(ful, stage=s)")


class Session:
    """`cakec serve` as a subprocess, spoken to one JSON line at a time."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "cakec.cli", "serve", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=ROOT)
        self.next_id = 0

    def send(self, raw: bytes) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def call(self, method: str, **params: object) -> dict:
        self.next_id += 1
        reply = self.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                      "params": params}).encode())
        assert reply["id"] == self.next_id
        return reply

    def close(self) -> tuple[int, str]:
        assert self.call("shutdown")["result"] is None
        _, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, err.decode()


def _cli_json(*args: str) -> object:
    out = subprocess.run([sys.executable, "-m", "cakec.cli", *args], capture_output=True,
                         text=True, cwd=ROOT)
    return json.loads(out.stdout)


@pytest.fixture
def session():
    s = Session()
    yield s
    if s.proc.poll() is None:
        s.proc.kill()
        s.proc.wait()


def test_session_verify_inspect_emit_then_shutdown(session: Session, tmp_path: Path) -> None:
    broken = tmp_path / "broken.cake"
    broken.write_text(BROKEN)
    reply = session.call("verify", path=str(broken))["result"]
    assert reply["ok"] is False
    assert reply["diagnostics"] == _cli_json("verify", "--format", "json", str(broken))["diagnostics"]
    [d] = reply["diagnostics"]
    assert (d["code"], d["line"], d["col"], d["end_col"]) == ("CAKE-T001", 55, 25, 28)

    # The same text given as source, named by path: the same answer.
    assert session.call("verify", source=BROKEN, path=str(broken))["result"] == reply
    unnamed = session.call("verify", source=BROKEN)["result"]["diagnostics"]
    assert unnamed[0]["file"] == "<source>"

    assert session.call("verify", path="examples/gemm_bf16.cake")["result"] == {
        "ok": True, "diagnostics": []}
    inspected = session.call("inspect", path="examples/gemm_bf16.cake")["result"]
    assert inspected["ledger"] == _cli_json("inspect", "examples/gemm_bf16.cake")
    assert session.call("inspect", path=str(broken))["result"]["ledger"] is None

    emitted = session.call("emit", path="examples/gemm_bf16.cake")["result"]
    assert emitted["ok"] and emitted["kernel"] == "gemm_bf16" and emitted["target"] == "sm_90a"
    assert "__global__" in emitted["cuda"]
    assert emitted["metadata"] == _cli_json("emit", "examples/gemm_bf16.cake",
                                            "--emit", "metadata")
    # A target the kernel cannot have: refused at verify, with the CLI's diagnostic.
    refused = session.call("emit", path="examples/seed_fragment.cake", target="sm_90a")["result"]
    assert not refused["ok"] and refused["cuda"] is None
    assert [d["code"] for d in refused["diagnostics"]] == ["CAKE-H001"]

    status, err = session.close()
    assert status == 0 and "Traceback" not in err


def test_protocol_errors_are_json_rpc_errors(session: Session) -> None:
    assert session.send(b"not json")["error"]["code"] == -32700
    assert session.send(b'{"id": 7, "method": "verify"}')["error"]["code"] == -32600
    assert session.call("frobnicate")["error"]["code"] == -32601
    assert session.call("verify")["error"]["code"] == -32602
    assert session.call("verify", path=7)["error"]["code"] == -32602
    missing = session.call("verify", path="no/such.cake")["error"]
    assert missing["code"] == -32602 and "no/such.cake" in missing["message"]
    batch = session.send(json.dumps([
        {"jsonrpc": "2.0", "id": "a", "method": "verify", "params": {"source": BROKEN}},
        {"jsonrpc": "2.0", "method": "verify", "params": {"source": BROKEN}},  # notification
    ]).encode())
    assert [r["id"] for r in batch] == ["a"]
    status, err = session.close()
    assert status == 0 and "Traceback" not in err


def test_server_target_is_the_default_of_every_request() -> None:
    s = Session("--target", "sm_90a")
    try:
        codes = [d["code"] for d in s.call("verify", path="examples/seed_fragment.cake")
                 ["result"]["diagnostics"]]
        assert codes == ["CAKE-H001"]
        assert s.call("verify", path="examples/seed_fragment.cake", target="sm_100a")["result"][
            "ok"]
    finally:
        s.close()


def test_verify_requests_import_neither_torch_nor_cuda_bindings() -> None:
    code = ("import sys, json; from cakec.serve.jsonrpc import Server; s = Server(); "
            "r = s.handle({'jsonrpc': '2.0', 'id': 1, 'method': 'verify', "
            "'params': {'path': 'examples/gemm_bf16.cake'}}); assert r['result']['ok'], r; "
            "print(json.dumps(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('torch', 'cuda', 'pygls'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []
