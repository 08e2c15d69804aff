"""How fast a warm `cakec serve` answers: the round trip an agent loop or an editor sees.

Starts `cakec serve` (JSON-RPC) and `cakec serve --lsp` as subprocesses and prints, as
medians after a warm-up, the wall time from writing a request to reading its answer for
examples/gemm_bf16.cake:
  * JSON-RPC verify / inspect / emit of an unchanged text (answered from the server's cache)
    and of a new text each time (a comment edited, so the whole pipeline runs);
  * LSP didChange → publishDiagnostics (a new text each time) and hover on a barrier,
    spoken by pygls's own client;
  * for scale, the in-process `verify_source` of a new text in this process (no server):
    what a new text costs the server is this plus the server's own share.

Goal (issue 17): ≤ 15 ms round trip for the GEMM example on a warm server.

With `--cpu` (Linux), the JSON-RPC rows are the server's CPU time per request (from
/proc/PID/stat: a mean, at the clock tick's resolution summed over the runs) and the
in-process row this process's CPU time: on a machine shared with other work the wall round
trip moves with the load, the CPU a request costs much less. The LSP rows stay wall time.
Run it with another checkout's interpreter for a before/after (`/path/to/venv/bin/python
bench/serve_speed.py --cpu`: the server is `python -m cakec.cli` of that interpreter).

    python bench/serve_speed.py [--runs N] [--cpu]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "examples" / "gemm_bf16.cake"
SERVE = [sys.executable, "-m", "cakec.cli", "serve"]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def jsonrpc_rows(runs: int, cpu: bool = False) -> dict[str, float]:
    proc = subprocess.Popen(SERVE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    assert proc.stdin and proc.stdout
    text = GEMM.read_text()

    def call(method: str, params: dict) -> float:
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        start = _cpu_seconds(proc.pid) if cpu else time.perf_counter()
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        elapsed = (_cpu_seconds(proc.pid) if cpu else time.perf_counter()) - start
        assert "result" in reply and reply["result"]["ok"], reply
        return elapsed * 1e3

    rows: dict[str, list[float]] = {}
    for n in range(runs + 1):  # round 0 warms up (grammar, lazy imports, pass pipeline)
        edited = f"# edit {n}\n{text}"
        for name, method, params in (
                ("verify, unchanged text", "verify", {"path": str(GEMM)}),
                ("verify, new text", "verify", {"source": edited, "path": str(GEMM)}),
                ("inspect, unchanged text", "inspect", {"path": str(GEMM)}),
                ("emit, unchanged text", "emit", {"path": str(GEMM)}),
                ("emit, new text", "emit", {"source": edited + "\n", "path": str(GEMM)})):
            ms = call(method, params)
            if n:
                rows.setdefault(name, []).append(ms)
    proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}\n')
    proc.stdin.flush()
    proc.wait(timeout=30)
    summary = statistics.mean if cpu else statistics.median  # ticks: only their sum is exact
    return {k: summary(v) for k, v in rows.items()}


async def lsp_rows(runs: int) -> dict[str, float]:
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("serve-speed", "0")
    published: asyncio.Queue[lsp.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    await client.start_io(*SERVE, "--lsp", cwd=ROOT)
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    client.initialized(lsp.InitializedParams())
    uri, text = GEMM.as_uri(), GEMM.read_text()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri, "cake", 0, text)))
    await published.get()
    line = text.splitlines().index("                lm.wait(full, stage=s)")
    rows: dict[str, list[float]] = {"LSP didChange → diagnostics": [], "LSP hover": []}
    for n in range(1, runs + 2):
        start = time.perf_counter()
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(n, uri),
            [lsp.TextDocumentContentChangeWholeDocument(f"# edit {n}\n{text}")]))
        while (await published.get()).version != n:
            pass
        changed = time.perf_counter()
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(line + 1, 25)))
        done = time.perf_counter()
        assert hover is not None and "barrier `full`" in hover.contents.value  # type: ignore
        if n > 1:
            rows["LSP didChange → diagnostics"].append((changed - start) * 1e3)
            rows["LSP hover"].append((done - changed) * 1e3)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {k: statistics.median(v) for k, v in rows.items()}


def in_process_row(runs: int, cpu: bool = False) -> dict[str, float]:
    from cakec.diagnostics import SourceFile
    from cakec.driver import verify_source

    text = GEMM.read_text()
    clock = time.process_time if cpu else time.perf_counter
    times = []
    for n in range(runs + 1):
        start = clock()
        verify_source(SourceFile(str(GEMM), f"# edit {n}\n{text}"))
        times.append((clock() - start) * 1e3)
    return {"in-process verify, new text": statistics.median(times[1:])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cpu", action="store_true",
                        help="CPU time per request instead of wall time (JSON-RPC, in-process)")
    args = parser.parse_args()
    rows = (jsonrpc_rows(args.runs, args.cpu) | asyncio.run(lsp_rows(args.runs))
            | in_process_row(args.runs, args.cpu))
    how = (f"CPU ms, mean of {args.runs} (JSON-RPC), median (in-process); LSP rows: wall ms"
           if args.cpu else f"median of {args.runs}")
    print(f"warm `cakec serve`, examples/gemm_bf16.cake, {how} (goal ≤ 15 ms)")
    for name, ms in rows.items():
        print(f"  {name:<32} {ms:8.2f} ms")


if __name__ == "__main__":
    main()
