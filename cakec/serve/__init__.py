"""`cakec serve`: a warm compiler for agent loops and editors.

`analysis` keeps the last compilations (verify, ledger, emit) keyed by their text, so a
repeated question costs a dictionary look-up; `jsonrpc` answers verify/inspect/emit
requests over stdio; `lsp` is a language server (pygls, the `[lsp]` extra) giving
diagnostics as you type, hover with the derived ledger and go-to-definition. See
docs/serve.md.
"""
