"""`cakec serve --lsp`: a language server for .cake files (pygls, the `[lsp]` extra).

* diagnostics as you type: every didOpen/didChange verifies the document's text (every
  gate) and publishes the result — ranges from our spans, severity, code, notes as
  relatedInformation, the help line appended to the message;
* hover: the derived ledger of the barrier, view, TMEM region, role or operation under the
  cursor (cakec/serve/hover.py);
* go-to-definition: the declaring name of a role, barrier, view or any other local.

Initialization option `{"target": "sm_90a"}` overrides every kernel's own target, like
`--target`. A failure inside a handler is never a traceback on the wire: a notification
publishes a CAKE-I001 diagnostic, a request answers a JSON-RPC error.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInternalError
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from cakec import __version__
from cakec.serve.analysis import Analysis, Analyzer, Json
from cakec.serve.positions import Positions

_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
             "note": lsp.DiagnosticSeverity.Information}

F = TypeVar("F", bound=Callable[..., Any])


class CakeLanguageServer(LanguageServer):
    def __init__(self, target: str | None = None) -> None:
        super().__init__("cakec", __version__)
        self.analyzer = Analyzer()
        self.target = target

    def analyse(self, doc: TextDocument) -> Analysis:
        return self.analyzer.analyse(_path(doc.uri), doc.source, self.target)

    def publish(self, uri: str) -> None:
        doc = self.workspace.get_text_document(uri)
        try:
            diagnostics = [_diagnostic(d, uri, Positions(doc.position_codec, doc.source))
                           for d in self.analyse(doc).diagnostics_json()]
        except Exception as e:  # noqa: BLE001 - said as a diagnostic, never a traceback
            diagnostics = [lsp.Diagnostic(
                lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
                f"internal error in cakec serve: {type(e).__name__}: {e}",
                severity=lsp.DiagnosticSeverity.Error, code="CAKE-I001", source="cakec")]
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri, diagnostics, version=doc.version))


def _path(uri: str) -> str:
    """The file name diagnostics carry: the path for file: URIs, else the URI itself."""
    return to_fs_path(uri) or uri


def _diagnostic(d: Json, uri: str, pos: Positions) -> lsp.Diagnostic:
    related = [lsp.DiagnosticRelatedInformation(lsp.Location(uri, pos.range(n)), n["message"])
               for n in d["notes"] if n["line"] is not None]
    message = "\n".join([d["message"], *(f"note: {n['message']}" for n in d["notes"]
                                         if n["line"] is None),
                         *([f"help: {d['help']}"] if d["help"] else [])])
    return lsp.Diagnostic(pos.range(d), message, severity=_SEVERITY[d["severity"]],
                          code=d["code"], source="cakec", related_information=related or None)


def _request(f: F) -> F:
    """A request handler whose failure is a JSON-RPC error without the traceback pygls
    would attach."""
    @functools.wraps(f)
    def wrapped(ls: CakeLanguageServer, params: Any) -> Any:
        try:
            return f(ls, params)
        except Exception as e:  # noqa: BLE001
            raise JsonRpcInternalError(f"internal error in cakec serve: "
                                       f"{type(e).__name__}: {e}") from None
    return wrapped  # type: ignore[return-value]


def build_server(target: str | None = None) -> CakeLanguageServer:
    server = CakeLanguageServer(target)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: CakeLanguageServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("target"), str):
            ls.target = options["target"]

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CakeLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CakeLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CakeLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(params.text_document.uri, []))

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    @_request
    def hover(ls: CakeLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
        from cakec.serve.hover import hover as hover_at

        doc = ls.workspace.get_text_document(params.text_document.uri)
        pos = Positions(doc.position_codec, doc.source)
        found = hover_at(ls.analyse(doc), *pos.server(params.position))
        if found is None:
            return None
        markdown, where = found
        return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, markdown),
                         pos.span_range(where))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    @_request
    def definition(ls: CakeLanguageServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        from cakec.serve.symbols import word_at

        doc = ls.workspace.get_text_document(params.text_document.uri)
        pos = Positions(doc.position_codec, doc.source)
        analysis = ls.analyse(doc)
        line, col = pos.server(params.position)
        found = word_at(analysis.comp.source, line, col)
        target = analysis.symbols().resolve(found[0], line) if found else None
        if target is None:
            return None
        return lsp.Location(params.text_document.uri, pos.span_range(target.span))

    return server


def serve(target: str | None = None) -> None:
    """Speak LSP on stdin/stdout until the client says exit."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the wire
    build_server(target).start_io(stdin, stdout)
