"""Parsing .cake text into `cakec.frontend.ast`, with positioned syntax diagnostics (CAKE-P…).

One grammar (grammar.lark), two drivers of its LALR tables. `_Engine` parses: Lark's basic
lexer (one scanner) as one pattern, the indenter, and a lean loop over Lark's LALR tables that
runs the transformer's methods inline as the parser reduces (building `cakec.frontend.ast`
nodes with spans from the tokens they keep, no Lark tree) and takes each chain of
single-child reductions of the precedence ladder (`expr → ternary → or_test → … → atom`, ten
per operand) as one learnt step. Its tables are cached on disk (keyed by the grammar and the
Python version), so a fresh `cakec verify` of a valid kernel never imports Lark. Input the
engine does not accept is parsed again by Lark's own parser (built once per process, cached
on disk as well), whose exceptions the syntax diagnostics are made from: both agree by
construction on what they accept (test/unit/test_parser_engine.py).
"""

from __future__ import annotations

import contextlib
import keyword
import os
import re
import threading
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

import marshal
import sys

from cakec.codecache import cache_path
from cakec.frontend import ast
from cakec.diagnostics import CompileError, Note, Span, error

if TYPE_CHECKING:
    from lark import Lark
    from lark.exceptions import UnexpectedInput

GRAMMAR = Path(__file__).with_name("grammar.lark")

#: Brackets nested deeper than this are reported (CAKE-P004) instead of exhausting the
#: Python stack in the recursive stages after parsing.
MAX_NESTING = 64


class Token(str):
    """A token: its text, terminal name and position, as Lark's `Token` has them (the
    indenter and the transformer read both kinds: Lark's lexer makes its own)."""

    __slots__ = ("type", "value", "start_pos", "line", "column", "end_line", "end_column",
                 "end_pos")

    def __new__(cls, kind: str, value: str, start_pos: int | None = None, line: int = 0,
                column: int = 0, end_line: int = 0, end_column: int = 0,
                end_pos: int | None = None) -> "Token":
        tok = str.__new__(cls, value)
        tok.type, tok.value, tok.start_pos = kind, value, start_pos
        tok.line, tok.column, tok.end_line, tok.end_column, tok.end_pos = (
            line, column, end_line, end_column, end_pos)
        return tok


class IndentationProblem(Exception):
    def __init__(self, line: int, col: int, message: str, code: str = "CAKE-P003"):
        super().__init__(message)
        self.line, self.col, self.code = line, col, code


class NotCake(Exception):
    """A Python keyword that Cake's grammar lacks (`return`, `lambda`, ...), at its token."""

    def __init__(self, token: Token):
        super().__init__(token.value)
        self.token = token


#: Python keywords that are names to Cake's lexer (Cake's own keywords lex as their own
#: terminals): each is refused where it stands, with what to write instead (`_NOT_CAKE`).
_PYTHON_ONLY = frozenset(keyword.kwlist)


class CakeIndenter:
    """The post-lexer of both parsers: `_INDENT`/`_DEDENT` tokens from the indentation of
    each line (none inside brackets), as Lark's `Indenter` makes them, with positions, the
    open brackets (for "never closed" notes and the nesting limit) and Python-only keywords
    refused where they stand."""

    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB"]
    CLOSE_PAREN_types = ["RPAR", "RSQB"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8
    always_accept = (NL_type,)  # Lark keeps this terminal for the post-lexer

    def __init__(self) -> None:
        self.paren_level = 0
        self.indent_level = [0]
        self.open_brackets: list[Token] = []

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        self.paren_level = 0
        self.indent_level = [0]
        self.open_brackets = []
        return self._process(stream)

    def handle_NL(self, token: Token) -> Iterator[Token]:
        # Lark's own version raises a position-less DedentError; ours says where. The
        # synthetic tokens take the position where the new line's text starts.
        if self.paren_level > 0:
            return
        yield token
        indent_str = token.rsplit("\n", 1)[1]
        indent = indent_str.count(" ") + indent_str.count("\t") * self.tab_len
        line, col = token.end_line or 0, token.end_column or 1
        if indent > self.indent_level[-1]:
            self.indent_level.append(indent)
            yield _synthetic(self.INDENT_type, indent_str, line, col)
        else:
            while indent < self.indent_level[-1]:
                self.indent_level.pop()
                yield _synthetic(self.DEDENT_type, indent_str, line, col)
            if indent != self.indent_level[-1]:
                raise IndentationProblem(
                    line, col, "unindent does not match any outer indentation level")

    def _process(self, stream: Iterator[Token]) -> Iterator[Token]:
        # Lark's loop, plus the open brackets (for "never closed" notes and the nesting
        # limit) and positioned end-of-file dedents.
        token = None
        # The kinds in locals: this loop sees every token.
        nl, opening, closing = self.NL_type, frozenset(self.OPEN_PAREN_types), frozenset(
            self.CLOSE_PAREN_types)
        for token in stream:
            kind = token.type
            if kind == "NAME" and token.value in _PYTHON_ONLY:
                raise NotCake(token)
            if kind == nl:
                yield from self.handle_NL(token)
                continue
            yield token
            if kind in opening:
                self.paren_level += 1
                self.open_brackets.append(token)
                if self.paren_level > MAX_NESTING:
                    raise IndentationProblem(
                        token.line or 0, token.column or 0,
                        f"brackets nested more than {MAX_NESTING} deep", "CAKE-P004")
            elif kind in closing and self.paren_level > 0:
                self.paren_level -= 1
                self.open_brackets.pop()
        line, col = (token.end_line or 1, token.end_column or 1) if token else (1, 1)
        while len(self.indent_level) > 1:
            self.indent_level.pop()
            yield _synthetic(self.DEDENT_type, "", line, col)


def _synthetic(kind: str, value: str, line: int, col: int) -> Token:
    return Token(kind, value, None, line, col, line, col)


_INDENTER = CakeIndenter()


@lru_cache(maxsize=1)
def parser() -> "Lark":
    """Lark's LALR parser of the grammar: its tables are the engine's, and it parses input the
    engine rejects, so that syntax errors carry Lark's expected-token sets. Only a syntax
    error (or a first run) imports Lark."""
    from lark import Lark

    # Lark rewrites a missing or stale cache file in place (and keys its content by the
    # file's name, so it cannot write a temporary file for us to rename): it runs under an
    # exclusive lock, so a concurrent process (pytest -n, lit) never reads half a file.
    path = cache_path("grammar.lark.cache")
    with _locked(path + ".lock"):
        return Lark(GRAMMAR.read_text(), parser="lalr", lexer="basic", postlex=_INDENTER,
                    keep_all_tokens=True, maybe_placeholders=True, transformer=_TRANSFORMER,
                    cache=path)


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """An exclusive advisory lock on `path` (none where the file cannot be opened: an
    unwritable cache only costs a rebuild)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _private(path: str) -> str:
    """A temporary name beside `path` that no other process or thread uses."""
    return f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"


class _Reject(Exception):
    """The engine met input it does not accept; Lark's parser says why."""


class _Splice(list):
    """The children of an inlined rule (`__x_star_N`, from `(...)*`), spliced into its
    parent's children as Lark does."""


#: Bumped when the tables' layout changes (it keys the cache file with the grammar).
_TABLES_FORMAT = 1


def _tables(lark: "Lark") -> dict[str, Any]:
    """Lark's LALR tables and lexer as plain data: per state, terminal or rule → the next state
    (a shift, or the goto of a reduction) or the complemented index of the rule it reduces;
    per rule (children count, goto symbol, (position, Nones before it) of spliced or
    placeholder children, Nones at the end, pass a single child through, the transformer
    method, whether it only passes its one child through); Lark's scanner as one pattern (a
    few dozen terminals: within re's 100 groups) and the keyword checks of its terminals."""
    from lark.lexer import UnlessCallback
    from lark.parsers.lalr_analysis import Shift

    table = lark.parser.parser.parser.parse_table
    index: dict[int, int] = {}  # id(rule) → its index (Lark's rules hash slowly)
    rules: list[tuple] = []
    actions: dict[int, dict[str, int]] = {}
    for state, row in table.states.items():
        out: dict[str, int] = {}
        for term, (action, arg) in row.items():
            if action is Shift:
                out[str(term)] = arg
                continue
            if id(arg) not in index:
                index[id(arg)] = len(rules)
                rules.append(_rule(arg))
            out[str(term)] = ~index[id(arg)]
        actions[state] = out
    lexer = lark.parser.lexer.lexer  # under the indenter (PostLexConnector)
    scanner = lexer.scanner  # built on first use, with the keyword checks (`callback`)
    retype: dict[str, tuple[str, int]] = {}
    for kind, callback in lexer.callback.items():
        if not isinstance(callback, UnlessCallback):
            raise TypeError(f"unexpected lexer callback for {kind}")
        retype[str(kind)] = _pattern(callback.scanner)
    return {"actions": actions, "rules": rules, "start": table.start_states["start"],
            "end": table.end_states["start"], "scanner": _pattern(scanner),
            "ignore": frozenset(map(str, lexer.ignore_types)),
            "newline": frozenset(map(str, lexer.newline_types)),
            "retype": retype}


def _pattern(scanner: Any) -> tuple[str, int]:
    return ("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in scanner.terminals),
            int(scanner.g_regex_flags))


def _rule(rule: Any) -> tuple:
    size = len(rule.expansion)
    empties = rule.options.empty_indices or [False] * size
    nones = [len(ones) for ones in "".join(str(int(b)) for b in empties).split("0")]
    fixups = tuple((i, nones[i]) for i, sym in enumerate(rule.expansion)
                   if nones[i] or (not sym.is_term and sym.name.startswith("_")))
    # Plain strings only (Lark's are often its Token): the cache must load without Lark.
    name = str(rule.origin.name)
    method = "" if name.startswith("_") else str(rule.alias or name)
    single = bool(rule.options.expand1 and not rule.alias)
    return (size, name, fixups, nones[size], single, method,
            single and size == 1 and not fixups and not nones[size])


def _load_tables() -> dict[str, Any]:
    """The tables, from the cache file when it holds those of this grammar (a fresh process
    then never imports Lark), else from Lark's parser, written back for the next process.
    `marshal` (plain data only) and the grammar's own text as the key: importing pickle and
    hashlib would cost more than reading the file."""
    key = f"{_TABLES_FORMAT} {sys.version}\n{GRAMMAR.read_text()}"
    path = cache_path("grammar.engine.cache")
    try:
        with open(path, "rb") as f:
            cached = marshal.load(f)
        if isinstance(cached, dict) and cached.get("key") == key:
            return cached
    except (OSError, EOFError, ValueError, TypeError):
        pass
    tables = _tables(parser())
    tables["key"] = key
    tmp = _private(path)
    try:
        with open(tmp, "wb") as f:
            marshal.dump(tables, f)
        os.replace(tmp, path)
    except OSError:  # an unwritable cache: the next process builds the tables again
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return tables


class _Engine:
    """Lark's LALR(1) tables run by a lean loop: the same grammar, the same reductions and
    children (every token kept, placeholders for missing `[...]`, inlined `_rules` spliced,
    single-child `?rules` passed through), the same transformer methods; without Lark's
    per-token parser state, per-rule wrapper chain and Token keyword checks (a third of
    the time of a parse). Anything the tables reject raises `_Reject`."""

    def __init__(self, tables: dict[str, Any], transformer: "_ToAst") -> None:
        self.actions: dict[int, dict[str, int]] = tables["actions"]
        self.rules = [(*r[:5], (getattr(transformer, r[5], None) or _no_method(r[5]))
                       if r[5] else _Splice, r[6]) for r in tables["rules"]]
        self.start, self.end = tables["start"], tables["end"]
        #: (state below, state, lookahead) → the state that a chain of pass-through
        #: reductions (`?expr: ternary`, `?ternary: or_test`, …) ends in, learnt as met
        self.chains: dict[tuple[int, int, str], int] = {}
        self.scanner = re.compile(*tables["scanner"])
        self.ignore, self.newline = tables["ignore"], tables["newline"]
        #: per terminal with keyword checks (NAME): the keyword a text is, as Lark's
        #: UnlessCallback finds it (a full match of the keywords' terminals)
        self.retype = {kind: _fullmatch(re.compile(*pattern))
                       for kind, pattern in tables["retype"].items()}
        self.keywords: dict[str, str | None] = {}  # memo of the keyword checks

    def tokens(self, text: str) -> list[Token]:
        """Lark's basic lexer (its scanner, keyword checks, line counting), without its
        per-token state objects; raises _Reject where no terminal matches. A list, not a
        generator, with each `Token` made inline (`Token.__new__` as a call was a quarter
        of the lexer's time, the generator's resumption another tenth)."""
        match, ignore, newline, retype = self.scanner.match, self.ignore, self.newline, \
            self.retype
        keywords = self.keywords
        out: list[Token] = []
        append, new = out.append, str.__new__
        pos, line, line_start, end = 0, 1, 0, len(text)
        while pos < end:
            m = match(text, pos)
            if m is None:
                raise _Reject()
            value, kind = m.group(), m.lastgroup
            start, col = pos, pos - line_start + 1
            start_line = line
            pos = m.end()
            if kind in newline:
                n = value.count("\n")
                if n:
                    line += n
                    line_start = start + value.rindex("\n") + 1
            if kind in ignore:
                continue
            if kind in retype:
                if value not in keywords:
                    keywords[value] = retype[kind](value)
                kind = keywords[value] or kind
            tok = new(Token, value)
            tok.type, tok.value, tok.start_pos, tok.line, tok.column = (
                kind, value, start, start_line, col)
            tok.end_line, tok.end_column, tok.end_pos = line, pos - line_start + 1, pos
            append(tok)
        return out

    def parse(self, tokens: Iterable[Token]) -> Any:
        # One loop over the tokens and then `$END`, every reduction inline: a call per token
        # was a tenth of a parse. The current state is a local (`state`); `below` holds the
        # states under it, `values` one value per state of `below` but the start state.
        actions, rules, chains, end = self.actions, self.rules, self.chains, self.end
        state = self.start
        below: list[int] = []
        values: list[Any] = []
        for token in chain(tokens, (None,)):
            kind = "$END" if token is None else token.type
            while True:
                act = actions[state].get(kind)
                if act is None:
                    raise _Reject()
                if act >= 0:
                    below.append(state)
                    values.append(token)
                    state = act
                    break
                rule = rules[~act]
                if rule[6]:
                    # A pass-through: the value stays, only the state changes.
                    key = (below[-1], state, kind)
                    nxt = chains.get(key)
                    if nxt is None:
                        nxt = chains[key] = self._chain(below[-1], act, kind, actions, rules)
                    state = nxt
                    continue
                size, goto, fixups, tail, single, fn, _ = rule
                if size:
                    children = values[-size:]
                    state = below[-size]
                    del below[-size:]
                    del values[-size:]
                else:
                    children = []
                if fixups:
                    children = _fix(children, fixups)
                if tail:
                    children += [None] * tail
                value = children[0] if single and len(children) == 1 else fn(children)
                below.append(state)
                values.append(value)
                state = actions[state][goto]
                if token is None and state == end:
                    return values[-1]
        return values[-1]

    def _chain(self, below: int, act: int, kind: str, actions: dict, rules: list) -> int:
        """The state on top of `below` after the pass-through reductions from `act` on."""
        while True:
            state = actions[below][rules[~act][1]]
            act = actions[state].get(kind)
            if act is None or act >= 0 or not rules[~act][6]:
                return state


def _fix(children: list, fixups: tuple[tuple[int, int], ...]) -> list:
    """Insert the placeholders before, and splice the inlined rules at, their positions."""
    out: list = []
    start = 0
    for i, nones in fixups:
        out += children[start:i]
        if nones:
            out += [None] * nones
        child = children[i]
        if isinstance(child, _Splice):
            out += child
        else:
            out.append(child)
        start = i + 1
    out += children[start:]
    return out


def _no_method(name: str) -> Any:
    def fail(children: list) -> Any:
        raise TypeError(f"no transformer method for the grammar rule `{name}`")
    return fail


def _fullmatch(regex: re.Pattern[str]) -> Any:
    def kind(text: str) -> str | None:
        m = regex.fullmatch(text)
        return m.lastgroup if m else None
    return kind


@lru_cache(maxsize=1)
def _engine() -> _Engine:
    return _Engine(_load_tables(), _TRANSFORMER)


#: The indenter and the transformer are stateful; one parse at a time per process.
_LOCK = threading.Lock()


def parse(text: str, path: str) -> ast.Module:
    """Parse a .cake file. Raises CompileError carrying the first syntax diagnostic."""
    if not text.endswith("\n"):
        text += "\n"
    with _LOCK:
        _TRANSFORMER.path = path
        try:
            engine = _engine()
            return engine.parse(_INDENTER.process(engine.tokens(text)))
        except Exception:  # noqa: BLE001 - Lark's parser gives the diagnostic
            return _lark_parse(text, path)


def _lark_parse(text: str, path: str) -> ast.Module:
    """Input the engine did not accept, through Lark's parser: its exceptions become the
    syntax diagnostics."""
    from lark.exceptions import UnexpectedInput

    try:
        return parser().parse(text)
    except IndentationProblem as exc:
        raise error(exc.code, str(exc), Span(path, exc.line, exc.col)) from None
    except NotCake as exc:
        raise _not_cake(path, exc.token) from None
    except UnexpectedInput as exc:
        raise _syntax_error(exc, path, text, _INDENTER.open_brackets) from None


# ---- error messages ----------------------------------------------------------------------

#: Terminals that can start an expression; when all are acceptable we say "an expression".
_EXPR_START = {"NAME", "INT", "FLOAT", "SIZE", "STRING", "LPAR", "LSQB", "TRUE", "FALSE",
               "NONE", "ADD_OP"}
#: Terminals that can start a statement.
_STMT_START = _EXPR_START | {"DEF", "WITH", "FOR", "IF", "PASS", "AT"}
#: Terminals that continue an expression; listed only when nothing structural is expected.
_OPERATORS = {"ADD_OP", "MUL_OP", "COMP_OP", "_POW", "DOT", "LPAR", "LSQB", "IF", "AND", "OR",
              "AUGOP"}

_DESCRIBE = {"_NL": "end of line", "_INDENT": "an indented block",
             "_DEDENT": "end of block", "$END": "end of file", "NAME": "a name",
             "INT": "an integer", "FLOAT": "a number", "SIZE": "a size such as 128b",
             "STRING": "a string", "COMP_OP": "a comparison", "ADD_OP": "`+` or `-`",
             "MUL_OP": "`*`, `/`, `//` or `%`", "_POW": "`**`", "AUGOP": "`+=`"}

#: Python statements that are not Cake, and what to write instead.
_NOT_CAKE = {
    "while": "Cake loops are `for NAME in lm.range(start, stop):`",
    "return": "kernels return nothing; results are stored with `tma_store`",
    "import": "Cake files have no imports; the vocabulary is the `lm` builtins",
    "from": "Cake files have no imports; the vocabulary is the `lm` builtins",
    "class": "Cake has no user types",
    "lambda": "Cake has no user functions",
    "try": "Cake has no exceptions; the verifier rejects bad schedules statically",
    "raise": "Cake has no exceptions; the verifier rejects bad schedules statically",
    "assert": "the verifier checks the schedule; there is no `assert`",
    "del": "Cake names live until the end of their block",
    "global": "Cake has one kernel scope",
    "nonlocal": "Cake has one kernel scope",
    "yield": "Cake kernels are not generators",
    "async": "asynchrony is explicit in Cake (TMA, barriers, MMA)",
    "await": "use `lm.wait(barrier, stage=s)`",
    "break": "Cake loops run their whole `lm.range`",
    "continue": "Cake loops run their whole `lm.range`",
    "print": "kernels cannot print",
    "is": "compare values with `==` or `!=`",
    "as": "`with` takes a role declared before it: `r = lm.role(warps=[...])`, then `with r:`",
    "except": "Cake has no exceptions; the verifier rejects bad schedules statically",
    "finally": "Cake has no exceptions; the verifier rejects bad schedules statically",
}


def _describe(term: str) -> str:
    if term in _DESCRIBE:
        return _DESCRIBE[term]
    try:
        pattern = parser().get_terminal(term).pattern
    except KeyError:
        return term.lower()
    if pattern.type == "str":
        return f"`{pattern.value}`"
    return term.lower()


def _expected(names: set[str]) -> str:
    """A short, readable list: categories for families of tokens, structural tokens by
    name, operators only when nothing else fits."""
    names = set(names)
    parts: list[str] = []
    if _STMT_START <= names:
        parts.append("a statement")
        names -= _STMT_START | {"NOT"}
    elif _EXPR_START <= names:
        parts.append("an expression")
        names -= _EXPR_START | {"NOT"}
    structural = names - _OPERATORS
    parts.extend(sorted((_describe(n) for n in structural), key=_order))
    if not parts and names:
        parts.append("an operator")
    if len(parts) > 5:
        parts = parts[:5] + ["…"]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _order(text: str) -> tuple[int, str]:
    # Punctuation first (the usual fix), words after.
    return (0 if text.startswith("`") else 1, text)


def _token_text(tok: Token) -> str:
    kind = tok.type
    if kind in ("$END", "_NL", "_INDENT", "_DEDENT"):
        return {"$END": "end of file", "_NL": "end of line", "_INDENT": "indent",
                "_DEDENT": "end of block"}[kind]
    if kind == "NAME":
        return f"name `{tok.value}`"
    if kind in ("INT", "FLOAT", "SIZE"):
        return f"number `{tok.value}`"
    if kind == "STRING":
        return f"string {tok.value}"
    return f"`{tok.value}`"


def _syntax_error(exc: "UnexpectedInput", path: str, text: str,
                  opened: list[Token]) -> CompileError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    lines = text.splitlines() or [""]
    if isinstance(exc, UnexpectedCharacters):
        ch = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "?"
        span = Span(path, exc.line, exc.column, exc.line, exc.column + 1)
        if ch in "\"'":
            return error("CAKE-P002", "unterminated string", span,
                         help=f"close it with {ch} on the same line")
        return error("CAKE-P002", f"invalid character {ch!r}", span)
    if not isinstance(exc, UnexpectedToken):
        return error("CAKE-P001", "unexpected end of file", Span(path, len(lines),
                                                                 len(lines[-1]) + 1))
    tok = exc.token
    at_end = tok.type == "$END" or (tok.type == "_DEDENT" and not tok.value)
    if at_end and opened:
        return _unclosed(path, opened[-1])
    line, col = tok.line or exc.line, tok.column or exc.column
    if at_end:
        line, col = _end_position(lines)
    word = _first_word(lines, line)
    if word in _NOT_CAKE and tok.type != "$END":
        wcol = len(lines[line - 1]) - len(lines[line - 1].lstrip()) + 1
        return error("CAKE-P001", f"`{word}` is not part of Cake",
                     Span(path, line, wcol, line, wcol + len(word)), help=_NOT_CAKE[word])
    expected = set(exc.accepts or exc.expected)
    if tok.type == "_INDENT":
        return error("CAKE-P003", "unexpected indent", Span(path, line, col),
                     help="indent only the body of a `def`, `with`, `for` or `if`")
    if "_INDENT" in expected:
        return error("CAKE-P003", "expected an indented block", Span(path, line, col),
                     help="indent the body of the block on the lines after the `:`")
    if tok.type in _CLOSE and not opened:
        return error("CAKE-P001", f"unmatched `{tok.value}`",
                     Span(path, line, col, line, col + 1), help="remove it")
    if tok.type in _CLOSE and _PAIRS[opened[-1].value] != tok.value:
        bracket = opened[-1]
        return error("CAKE-P001", f"`{tok.value}` does not close `{bracket.value}`",
                     Span(path, line, col, line, col + 1),
                     notes=[Note(_tok_span(path, bracket), f"`{bracket.value}` opened here")],
                     help=f"close it with `{_PAIRS[bracket.value]}`")
    end = col + len(str(tok.value)) if tok.type not in ("$END", "_NL", "_DEDENT") else col + 1
    what = "end of file" if at_end else _token_text(tok)
    message = f"unexpected {what}; expected {_expected(expected)}"
    span = Span(path, line, col, line, end)
    if opened and opened[-1].line < line:
        # The usual cause: a bracket left open on an earlier line swallowed this one.
        bracket = opened[-1]
        return error("CAKE-P001", message, span, notes=[Note(
            _tok_span(path, bracket), f"`{bracket.value}` opened here is still open")],
            help=f"close it with `{_PAIRS[bracket.value]}`")
    return error("CAKE-P001", message, span, help=_help(tok, expected))


_PAIRS = {"(": ")", "[": "]"}
_CLOSE = {"RPAR", "RSQB"}


def _tok_span(path: str, tok: Token) -> Span:
    return Span(path, tok.line, tok.column, tok.end_line, tok.end_column)


def _unclosed(path: str, bracket: Token) -> CompileError:
    return error("CAKE-P001", f"`{bracket.value}` is never closed", _tok_span(path, bracket),
                 help=f"close it with `{_PAIRS[bracket.value]}`")


def _end_position(lines: list[str]) -> tuple[int, int]:
    """Just after the last code of the file, before trailing comments and blank lines."""
    for n in range(len(lines), 0, -1):
        code = lines[n - 1].split("#", 1)[0].rstrip()
        if code:
            return n, len(code) + 1
    return 1, 1


def _not_cake(path: str, tok: Token) -> CompileError:
    line, col = tok.line or 1, tok.column or 1
    return error("CAKE-P001", f"`{tok.value}` is not part of Cake",
                 Span(path, line, col, line, col + len(tok.value)),
                 help=_NOT_CAKE.get(tok.value, "Cake is a schedule language, not Python: "
                                    "docs/language.md lists every construct"))


def _first_word(lines: list[str], line: int) -> str:
    if not 1 <= line <= len(lines):
        return ""
    words = lines[line - 1].split(None, 1)
    return words[0].rstrip(":(") if words else ""


def _help(tok: Token, expected: set[str]) -> str | None:
    if tok.type in _EXPR_START and "COMMA" in expected:
        return "separate items with `,`"
    if expected == {"COLON"}:
        return "a `def`, `with`, `for` or `if` line ends with `:`"
    if expected == {"_NL"}:
        return "one statement per line; a block starts on the line after `:`"
    return None


# ---- tokens and nodes → ast (run inline by the parser at each reduction) ----------------


# The kinds of item are tested most frequent first (nodes, then tokens): the parser asks
# for the span of about every third reduction.

def _start_of(item: Any) -> tuple[int, int] | None:
    if isinstance(item, ast.Node):
        return item.span.line, item.span.col
    if isinstance(item, str):
        return None if item.type in _LAYOUT else (item.line, item.column)
    if isinstance(item, tuple):
        return _first_start(item)
    if isinstance(item, Span):
        return item.line, item.col
    return None


def _end_of(item: Any) -> tuple[int, int] | None:
    if isinstance(item, ast.Node):
        return item.span.end_line, item.span.end_col
    if isinstance(item, str):
        return None if item.type in _LAYOUT else (item.end_line, item.end_column)
    if isinstance(item, tuple):
        return _last_end(item)
    if isinstance(item, Span):
        return item.end_line, item.end_col
    return None


def _first_start(items: Sequence[Any]) -> tuple[int, int] | None:
    for item in items:
        pos = _start_of(item)
        if pos is not None:
            return pos
    return None


def _last_end(items: Sequence[Any]) -> tuple[int, int] | None:
    for item in reversed(items):
        pos = _end_of(item)
        if pos is not None:
            return pos
    return None


#: Tokens the indenter makes: they have no text of their own to span
_LAYOUT = frozenset(("_NL", "_INDENT", "_DEDENT"))


def _nodes(items: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(i for i in items if isinstance(i, ast.Node))


class _ToAst:
    """One method per grammar rule (or alias), called with the rule's children: tokens,
    including punctuation (`keep_all_tokens`) for exact spans, and already-built nodes."""

    def __init__(self) -> None:
        self.path = "<input>"

    def _span(self, items: Sequence[Any]) -> Span:
        start = _first_start(items) or (0, 0)
        end = _last_end(items) or start
        return Span(self.path, start[0], start[1], end[0], end[1])

    def _tok(self, tok: Token) -> Span:
        return Span(self.path, tok.line, tok.column, tok.end_line, tok.end_column)

    # statements
    def start(self, items):
        return ast.Module(Span(self.path, 1, 1), _nodes(items))

    def simple_stmt(self, items):
        return items[0]

    def assign(self, items):
        targets, _, value = items
        return ast.Assign(self._span((targets, value)), targets, value)

    def aug_assign(self, items):
        targets, op, value = items
        return ast.Assign(self._span((targets, value)), targets, value, aug_op=str(op)[:-1])

    def target_name(self, items):
        return (ast.Name(self._tok(items[0]), str(items[0])),)

    def target_tuple(self, items):
        return tuple(ast.Name(self._tok(t), str(t)) for t in items
                     if isinstance(t, str) and t.type == "NAME")

    def expr_stmt(self, items):
        return ast.ExprStmt(items[0].span, items[0])

    def pass_stmt(self, items):
        return ast.Pass(self._tok(items[0]))

    def suite(self, items):
        return _nodes(items)

    def with_stmt(self, items):
        kw, context, _, body = items
        return ast.With(self._span((kw, body)), context, body)

    def for_stmt(self, items):
        kw, var, _, iterable, _, body = items
        return ast.For(self._span((kw, body)), ast.Name(self._tok(var), str(var)), iterable,
                       body)

    def if_stmt(self, items):
        kw, cond, _, body, *rest = items
        orelse = rest.pop() if rest and isinstance(rest[-1], tuple) else ()
        # Fold `elif` chains into nested ifs, innermost last.
        for clause in reversed([r for r in rest if isinstance(r, ast.If)]):
            orelse = (ast.If(clause.span, clause.cond, clause.body, orelse),)
        return ast.If(self._span((kw, body, orelse)), cond, body, orelse)

    def elif_clause(self, items):
        kw, cond, _, body = items
        return ast.If(self._span((kw, body)), cond, body, ())

    def else_clause(self, items):
        return items[-1]

    def dotted_name(self, items):
        names = [t for t in items if t.type == "NAME"]
        return tuple(str(t) for t in names), self._span((names[0], names[-1]))

    def call_args(self, items):
        _, args, close = items
        pos, kws = args if args is not None else ((), ())
        return pos, kws, close

    def decorator(self, items):
        at, (name, name_span), args, _ = items
        pos, kws, close = args if args is not None else ((), (), name_span)
        return ast.Decorator(self._span((at, close)), name, pos, kws)

    def param(self, items):
        name, _, ann = items
        if ann is None:
            return ast.Param(self._tok(name), str(name), None, None)
        return ast.Param(self._tok(name), str(name), ann[0], ann[1])

    def params(self, items):
        return _nodes(items)

    def funcdef(self, items):
        decos = tuple(i for i in items if isinstance(i, ast.Decorator))
        lpar = next(i for i, t in enumerate(items) if isinstance(t, str) and t.type == "LPAR")
        name, params, body = items[lpar - 1], items[lpar + 1] or (), items[-1]
        return ast.FuncDef(self._span((decos or items[lpar - 2], body)), str(name),
                           self._tok(name), decos, params, body)

    # expressions
    def name(self, items):
        return ast.Name(self._tok(items[0]), str(items[0]))

    def int_lit(self, items):
        tok = items[0]
        digits = str(tok).replace("_", "")
        if len(digits) > 40:
            raise error("CAKE-T010", "integer literal too large", self._tok(tok))
        value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 10)
        return ast.IntLit(self._tok(tok), value)

    def float_lit(self, items):
        return ast.FloatLit(self._tok(items[0]), float(items[0]))

    def size_lit(self, items):
        text = str(items[0])
        if len(text) > 40:
            raise error("CAKE-T010", "size literal too large", self._tok(items[0]))
        return ast.SizeLit(self._tok(items[0]), int(text[:-1]), text)

    def str_lit(self, items):
        return ast.StrLit(self._tok(items[0]), str(items[0])[1:-1])

    def true_lit(self, items):
        return ast.BoolLit(self._tok(items[0]), True)

    def false_lit(self, items):
        return ast.BoolLit(self._tok(items[0]), False)

    def none_lit(self, items):
        return ast.NoneLit(self._tok(items[0]))

    def paren(self, items):
        return items[1]

    def tuple_lit(self, items):
        return ast.TupleLit(self._span(items), _nodes(items))

    def list_lit(self, items):
        return ast.ListLit(self._span(items), _nodes(items))

    def arglist(self, items):
        nodes = _nodes(items)
        return (tuple(i for i in nodes if not isinstance(i, ast.Keyword)),
                tuple(i for i in nodes if isinstance(i, ast.Keyword)))

    def kwarg(self, items):
        name, _, value = items
        return ast.Keyword(self._span((name, value)), str(name), value)

    def call(self, items):
        func, _, args, close = items
        pos, kws = args if args is not None else ((), ())
        return ast.Call(self._span((func, close)), func, pos, kws)

    def subscripts(self, items):
        return _nodes(items)

    def slice(self, items):
        lower, colon, upper = items
        return ast.Slice(self._span((lower, colon, upper)), lower, upper)

    def subscript(self, items):
        value, _, index, close = items
        return ast.Subscript(self._span((value, close)), value, index)

    def attribute(self, items):
        value, _, attr = items
        return ast.Attribute(self._span((value, attr)), value, str(attr))

    def _fold(self, items) -> ast.Expr:
        left = items[0]
        for op, right in zip(items[1::2], items[2::2]):
            left = ast.BinOp(self._span((left, right)), str(op), left, right)
        return left

    arith = term = comparison = or_test = and_test = power = _fold

    def unary(self, items):
        op, operand = items
        return ast.UnaryOp(self._span((op, operand)), str(op), operand)

    def not_test(self, items):
        op, operand = items
        return ast.UnaryOp(self._span((op, operand)), "not", operand)

    def ifexp(self, items):
        then, _, cond, _, orelse = items
        return ast.IfExp(self._span((then, orelse)), cond, then, orelse)


_TRANSFORMER = _ToAst()
