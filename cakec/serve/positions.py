"""Our positions ↔ the editor's.

Spans are 1-based lines and columns counted in code points, end-exclusive (the JSON
diagnostic schema); LSP positions are 0-based, with columns in the code units the client
negotiated (UTF-16 unless it asked otherwise; pygls's codec knows which). The end of a
span follows `span_position`, the same rule `--format json` uses.
"""

from __future__ import annotations

from typing import Any, Sequence

from lsprotocol import types as lsp
from pygls.workspace import PositionCodec
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from cakec.diagnostics import Span, span_position


class Positions:
    """Conversions for one version of one document (its lines split once)."""

    def __init__(self, codec: PositionCodec, text: str) -> None:
        self._codec = codec
        self._lines: Sequence[str] = text.splitlines(True)

    def range(self, fields: dict[str, Any]) -> lsp.Range:
        """A Range from a diagnostic's (or note's) JSON position fields; a diagnostic
        without a place sits at the top of the file."""
        if fields.get("line") is None:
            return lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
        start = ServerTextPosition(fields["line"] - 1, fields["col"] - 1)
        end = ServerTextPosition(fields["end_line"] - 1, fields["end_col"] - 1)
        return self._codec.range_to_client_units(self._lines, ServerTextRange(start, end))

    def span_range(self, span: Span) -> lsp.Range:
        return self.range(span_position(span))

    def server(self, position: lsp.Position) -> tuple[int, int]:
        """A client position as our 1-based (line, column in code points)."""
        p = self._codec.position_from_client_units(self._lines, position)
        return p.line + 1, p.character + 1
