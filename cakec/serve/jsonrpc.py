"""`cakec serve`: JSON-RPC 2.0 over stdio, one message per line (JSON Lines).

Methods (docs/serve.md has examples):
  verify  {path | source [, path], target?} → {ok, diagnostics}
  inspect {path | source [, path], target?} → {ok, diagnostics, ledger}
  emit    {path | source [, path], target?} → {ok, diagnostics, kernel, target, cuda, metadata}
  shutdown → null, then the server exits (as it does on `exit` or end of input).

`diagnostics` is what `cakec verify --format json` prints, `ledger` what `cakec inspect`
prints. Nothing but responses is written to stdout, and never a traceback: a compiler bug
is a CAKE-I001 diagnostic (the driver's), a bug here a JSON-RPC internal error.
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO, Callable

from cakec.serve.analysis import Analysis, Analyzer, Json

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603)

#: The file name diagnostics carry for `source` given without a `path`.
SOURCE_NAME = "<source>"


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class Server:
    """Answers requests; `running` turns false after `shutdown` or `exit`."""

    def __init__(self, target: str | None = None) -> None:
        self.analyzer = Analyzer()
        self.target = target  # `cakec serve --target`: the default for every request
        self.running = True
        self._methods: dict[str, Callable[[Json], Any]] = {
            "verify": lambda p: self._verify(self._analyse(p)),
            "inspect": lambda p: self._inspect(self._analyse(p)),
            "emit": lambda p: self._analyse(p).emitted(),
            "shutdown": self._stop, "exit": self._stop,
        }

    def handle_line(self, line: bytes) -> Json | list[Json] | None:
        """The response to one line of input (None for notifications and blank lines)."""
        if not line.strip():
            return None
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError) as e:
            return _error(None, PARSE_ERROR, f"not JSON: {e}")
        if isinstance(message, list):  # a batch
            replies = [r for r in map(self.handle, message) if r is not None] if message else [
                _error(None, INVALID_REQUEST, "empty batch")]
            return replies or None
        return self.handle(message)

    def handle(self, message: Any) -> Json | None:
        ident = message.get("id") if isinstance(message, dict) else None
        try:
            if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0"
                    and isinstance(message.get("method"), str)):
                raise RpcError(INVALID_REQUEST, "expected a JSON-RPC 2.0 request object")
            method = self._methods.get(message["method"])
            if method is None:
                raise RpcError(METHOD_NOT_FOUND, f"unknown method `{message['method']}`; "
                               "methods: " + ", ".join(self._methods))
            params = message.get("params", {})
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params must be an object")
            result = method(params)
        except RpcError as e:
            return _error(ident, e.code, str(e))
        except Exception as e:  # noqa: BLE001 - a bug in the server: an error, never a traceback
            return _error(ident, INTERNAL_ERROR, f"internal error: {type(e).__name__}: {e}")
        if "id" not in message:
            return None  # a notification
        return {"jsonrpc": "2.0", "id": ident, "result": result}

    def _analyse(self, params: Json) -> Analysis:
        path, source, target = (params.get(k) for k in ("path", "source", "target"))
        for key, value in (("path", path), ("source", source), ("target", target)):
            if value is not None and not isinstance(value, str):
                raise RpcError(INVALID_PARAMS, f"`{key}` must be a string")
        if source is None:
            if path is None:
                raise RpcError(INVALID_PARAMS, "give `path` or `source`")
            from cakec.driver import read_source

            try:
                source = read_source(path).text
            except (OSError, UnicodeDecodeError) as e:
                raise RpcError(INVALID_PARAMS, f"cannot read {path}: "
                               f"{getattr(e, 'strerror', None) or e}") from None
        return self.analyzer.analyse(path or SOURCE_NAME, source, target or self.target)

    @staticmethod
    def _verify(a: Analysis) -> Json:
        return {"ok": a.ok, "diagnostics": a.diagnostics_json()}

    @staticmethod
    def _inspect(a: Analysis) -> Json:
        return {"ok": a.ok, "diagnostics": a.diagnostics_json(), "ledger": a.ledger()}

    def _stop(self, _params: Json) -> None:
        self.running = False


def _error(ident: Any, code: int, message: str) -> Json:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def serve(stdin: BinaryIO, stdout: BinaryIO, target: str | None = None) -> None:
    """Answer lines from `stdin` on `stdout` until shutdown, exit or end of input."""
    server = Server(target)
    real_stdout, sys.stdout = sys.stdout, sys.stderr  # a stray print must not corrupt the wire
    try:
        for line in stdin:
            reply = server.handle_line(line)
            if reply is not None:
                stdout.write(json.dumps(reply).encode() + b"\n")
                stdout.flush()
            if not server.running:
                break
    finally:
        sys.stdout = real_stdout
