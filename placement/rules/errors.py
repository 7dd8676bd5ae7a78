"""Errors the rules engine raises for bad input (the API turns them into 400 field errors)."""

from __future__ import annotations


class RulesInputError(ValueError):
    """Unknown slugs, profiles or contradictory request fields.

    `errors` maps a request field (dotted path, e.g. ``slugs`` or ``constraints.require``) to
    human-readable messages, in the shape DRF uses for field errors.
    """

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = {field: list(messages) for field, messages in errors.items() if messages}
        super().__init__("; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in self.errors.items()))


class RulesDataError(ValueError):
    """The rules data in fixtures/rules/ is inconsistent with itself or with the vocabulary."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))
