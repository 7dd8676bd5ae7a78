"""Every parser entry point bounded the same way (issue 39.3): the scenario and cluster uploads,
`import_catalog` and `import_cluster` read YAML and JSON through these two functions, so a number
too long, nesting too deep, bytes that are not UTF-8 or a document that is not text give one clear
reason (`ParseProblem`, with the line and column where known) instead of a 500 or a traceback.

Pure Python (no Django): callers turn a ParseProblem into their own error shape ({field: [reason]}
for pages, `file: field: reason` for commands).
"""

from __future__ import annotations

import json
import re

import yaml

from scheduler_core.scenario.loading import MAX_NUMBER_DIGITS, BoundedLoader
from scheduler_core.scenario.loading import too_long as _too_long

# Numbers: the longest a legitimate document holds is a 64-bit seed (19 digits) or a byte
# quantity; Python refuses int() past 4,300 digits with a ValueError (CVE-2020-10735).
# Nesting: kubectl output of pods is ~10 deep, a scenario ~8; 64 leaves room and stays far
# below the interpreter's recursion limit (a 100k-deep document is refused before parsing).
MAX_DEPTH = 64


class ParseProblem(ValueError):
    """Why a document could not be read; `where` is "line L column C" when known, else ""."""

    def __init__(self, reason: str, where: str = "", *, syntax: bool = False):
        self.reason, self.where, self.syntax = reason, where, syntax  # syntax: not JSON/YAML at all
        super().__init__(f"{where}: {reason}" if where else reason)


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line} column {column}"


def _text(raw: bytes | str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseProblem(f"not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {exc.start}") from None


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\']|\'\')*\'', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


def _check_depth(text: str) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH before the pure-Python parser spends seconds on it
    (cheap: comments and quoted strings are skipped by regexes, then only brackets are visited)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for match in _BRACKETS.finditer(_STRINGS.sub("", re.sub(r"(?m)(^|\s)#.*$", "", text))):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_DEPTH:
            raise ParseProblem(f"nested too deeply (more than {MAX_DEPTH} levels)")


def load_json(raw: bytes | str):
    """A JSON document, bounded; raises ParseProblem."""
    text = _text(raw)  # the C scanner stops deep nesting itself (RecursionError), without a copy

    def bounded_int(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
            raise ParseProblem(_too_long(digits.lstrip("-")), _position(text, max(text.find(digits), 0)))
        return int(digits)

    def no_constant(name: str):
        raise ParseProblem(f"{name} is not a JSON number")

    try:
        return json.loads(text, parse_int=bounded_int, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise ParseProblem(exc.msg, f"line {exc.lineno} column {exc.colno}", syntax=True) from None
    except RecursionError:
        raise ParseProblem("nested too deeply to read") from None




def load_yaml(raw: bytes | str):
    """A YAML (or JSON) document, bounded; raises ParseProblem."""
    text = _text(raw)
    _check_depth(text)
    try:
        return yaml.load(text, Loader=BoundedLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ParseProblem(str(getattr(exc, "problem", None) or exc), where,
                           syntax=not isinstance(exc, yaml.constructor.ConstructorError)) from None
    except RecursionError:
        raise ParseProblem(f"nested too deeply (more than {MAX_DEPTH} levels)") from None


_WS = re.compile(r"[ \t\n\r]*")


class _NeedMore(Exception):
    """A value runs past the text read so far."""


class _Stream:
    """UTF-8 text read from a binary file in chunks; only the unread part is held."""

    def __init__(self, fileobj, chunk: int):
        import codecs

        self.file, self.chunk = fileobj, chunk
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf, self.pos, self.eof, self.consumed = "", 0, False, 0
        self.dropped = 0  # characters read and dropped before buf: buf[i] is character dropped + i

    def fill(self, size: int = 0) -> None:
        data = self.file.read(size or self.chunk)
        try:
            text = self.decoder.decode(data or b"", final=not data)
        except UnicodeDecodeError as exc:
            offset = self.consumed + len(self.buf.encode()) + exc.start
            raise ParseProblem(f"not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {offset:,}") from None
        self.consumed += len(self.buf[: self.pos].encode())
        self.dropped += self.pos
        self.buf, self.pos, self.eof = self.buf[self.pos:] + text, 0, not data

    def at(self) -> int:
        """Characters read so far."""
        return self.dropped + self.pos

    def peek(self) -> str:
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos: self.pos + 1]
            self.fill()

    def take(self, char: str, where: str) -> None:
        if self.peek() != char:
            raise ParseProblem(f"expected {char!r}", where, syntax=True)
        self.pos += 1

    def value(self, decoder: json.JSONDecoder, where: str, limit: int | None = None, too_big: str = ""):
        """One JSON value; reads more while the value runs past the buffer, and refuses it once it
        runs past `limit` characters (its tree is never built), with `too_big` as the reason."""
        while True:
            self.peek()
            try:
                value, end = decoder.raw_decode(self.buf, self.pos)
            except _NeedMore:
                self.more(limit, where, too_big)
                continue
            except json.JSONDecodeError as exc:
                truncated = exc.pos >= len(self.buf) - 1 or exc.msg.startswith("Unterminated")
                if truncated and not self.eof:
                    self.more(limit, where, too_big)
                    continue
                raise ParseProblem(exc.msg, where, syntax=True) from None
            except RecursionError:
                raise ParseProblem("nested too deeply to read", where) from None
            if end >= len(self.buf) and not self.eof:  # a number may go on in the next chunk
                self.more(limit, where, too_big)
                continue
            if limit is not None and end - self.pos > limit:
                raise ParseProblem(too_big or _too_big(limit), where)
            self.pos = end
            return value

    def more(self, limit: int | None, where: str, too_big: str = "") -> None:
        """Read on for a value that runs past the buffer: as much again as it already spans (so a
        large value is parsed about twice, not once per chunk), never past `limit` by more than a chunk."""
        span = len(self.buf) - self.pos
        if limit is not None and span > limit:
            raise ParseProblem(too_big or _too_big(limit), where)
        grow = max(self.chunk, span)
        self.fill(grow if limit is None else min(grow, max(self.chunk, limit + 1 - span)))


def _too_big(limit: int) -> str:
    return f"an object of more than {limit / 2**20:g} MiB of JSON (a node or a pod is a few KiB)"


def load_json_stream(fileobj, *, prune=None, max_items: int | None = None, what: str = "items",
                     max_value_chars: int | None = None, chunk: int = 1 << 16):
    """A JSON document read from a binary file with bounded memory: a Kubernetes List's `items`
    (or a top-level array) is decoded one item at a time and each item is passed through
    `prune(item)` (keep only what the caller reads) before the next is read, so the raw bytes, the
    text and the full tree are never held together. The same bounds as load_json; a problem inside
    an item is located as `items[N]`. More than `max_items` items are refused as soon as they are
    seen (`what` names them in the message). An item of more than `max_value_chars` characters is
    refused before its tree is built, and so is a document whose values outside `items` add up to
    more: the tree of one value is the most held besides what `prune` keeps. A value that runs past
    the buffer is parsed again from its start once the buffer has grown by as much as it spans, so
    a refused value was parsed at most `max_value_chars` + `chunk` characters far."""
    problem_at: dict = {}

    def bounded_int(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
            start = stream.buf.find(digits, stream.pos)
            if start + len(digits) >= len(stream.buf) and not stream.eof:
                raise _NeedMore  # the number may go on in the next chunk
            raise ParseProblem(_too_long(digits.lstrip("-")), problem_at.get("where", ""))
        return int(digits)

    def no_constant(name: str):
        raise ParseProblem(f"{name} is not a JSON number", problem_at.get("where", ""))

    decoder = json.JSONDecoder(parse_int=bounded_int, parse_constant=no_constant)
    stream = _Stream(fileobj, chunk)
    keep = prune or (lambda item: item)

    def read_array(label: str) -> list:
        stream.take("[", label)
        items: list = []
        if stream.peek() == "]":
            stream.pos += 1
            return items
        while True:
            problem_at["where"] = f"{label}[{len(items)}]"
            if max_items is not None and len(items) >= max_items:
                raise ParseProblem(f"more than {max_items:,} {what}", label)
            items.append(keep(stream.value(decoder, problem_at["where"], max_value_chars)))
            following = stream.peek()
            stream.pos += 1
            if following == "]":
                return items
            if following != ",":
                raise ParseProblem("expected ',' or ']'", problem_at["where"], syntax=True)

    outside = 0  # characters of the document outside `items`

    def outer_value(where: str):
        nonlocal outside
        start = stream.at()
        left = None if max_value_chars is None else max_value_chars - outside
        value = stream.value(decoder, where, left, f"values outside `items` of more than {max_value_chars / 2**20:g} MiB "
                                                   "of JSON in all (a List's metadata is a few bytes)")
        outside += stream.at() - start
        return value

    first = stream.peek()
    if first == "[":
        document = read_array("items")
    elif first == "{":
        stream.pos += 1
        document = {}
        while stream.peek() != "}":
            if document:
                stream.take(",", "(document)")
            problem_at["where"] = "(document)"
            key = outer_value("(document)")
            if not isinstance(key, str):
                raise ParseProblem("expected a key", "(document)", syntax=True)
            stream.take(":", "(document)")
            document[key] = read_array("items") if key == "items" and stream.peek() == "[" else outer_value(key)
        stream.pos += 1
    else:
        problem_at["where"] = "(document)"
        document = outer_value("(document)")
    if stream.peek() != "":
        raise ParseProblem("extra data after the document", syntax=True)
    return document
