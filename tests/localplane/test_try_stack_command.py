"""`manage.py try_stack`: bad input is refused naming the argument, before any process starts."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

pytestmark = pytest.mark.django_db


def test_an_unknown_stack_is_refused_naming_the_argument():
    with pytest.raises(CommandError, match="stack_id: no stack 987654"):
        call_command("try_stack", "987654")
