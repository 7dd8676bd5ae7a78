"""Read a rendered HTML form the way a browser submits it, so tests can post back exactly what a
user who changed nothing would send (not the form's own initial data)."""

from __future__ import annotations

from html.parser import HTMLParser

TEXT_INPUTS = {"text", "url", "hidden", "email", "number", "search", "password", "tel", ""}


class _FormParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms: list[list[tuple[str, str]]] = []
        self._fields: list[tuple[str, str]] | None = None
        self._textarea: tuple[str, list[str]] | None = None
        self._select: dict | None = None
        self._option: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._fields = []
            return
        if self._fields is None or "disabled" in a:
            return
        name = a.get("name")
        if tag == "input" and name:
            kind = (a.get("type") or "").lower()
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self._fields.append((name, a.get("value", "on")))
            elif kind in TEXT_INPUTS:
                self._fields.append((name, a.get("value", "")))
        elif tag == "textarea" and name:
            self._textarea = (name, [])
        elif tag == "select" and name:
            self._select = {"name": name, "multiple": "multiple" in a, "options": []}
        elif tag == "option" and self._select is not None:
            self._option = {"value": a.get("value"), "selected": "selected" in a, "text": []}
            self._select["options"].append(self._option)

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea[1].append(data)
        if self._option is not None:
            self._option["text"].append(data)

    def handle_endtag(self, tag):
        if tag == "textarea" and self._textarea is not None:
            name, parts = self._textarea
            text = "".join(parts)
            # HTML drops one newline right after <textarea> (Django's widget writes one).
            self._fields.append((name, text[1:] if text.startswith("\n") else text))
            self._textarea = None
        elif tag == "option":
            self._option = None
        elif tag == "select" and self._select is not None:
            options = self._select["options"]
            values = [o["value"] if o["value"] is not None else "".join(o["text"]) for o in options]
            chosen = [v for v, o in zip(values, options) if o["selected"]]
            if not self._select["multiple"] and not chosen and values:
                chosen = values[:1]  # a single select always submits one option
            self._fields.extend((self._select["name"], v) for v in chosen)
            self._select = None
        elif tag == "form" and self._fields is not None:
            self.forms.append(self._fields)
            self._fields = None


def rendered_form_fields(html: str, containing: str) -> list[tuple[str, str]]:
    """The (name, value) pairs a browser would submit from the form that has a field `containing`."""
    parser = _FormParser()
    parser.feed(html)
    for fields in parser.forms:
        if any(name == containing for name, _ in fields):
            return fields
    raise AssertionError(f"no form with a field named {containing!r} on the page")


def as_post_data(fields: list[tuple[str, str]], **overrides: str) -> dict[str, list[str]]:
    """Pairs -> a dict of lists for Django's test client (repeated names stay lists)."""
    data: dict[str, list[str]] = {}
    for name, value in fields:
        data.setdefault(name, []).append(value)
    for name, value in overrides.items():
        data[name] = [value]
    return data
