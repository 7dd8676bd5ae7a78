"""Saved stacks can be renamed and deleted by whoever saved them (or a reviewer), never when a
decision record relies on them or their runs."""

import pytest

from placement.evidence.models import SimulationRun
from placement.stacks.models import Stack
from tests.decisions.conftest import proposal, stacks  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def stack(architect):
    return Stack.objects.create(name="#1 auto-named", profile="training", created_by=architect,
                                request={"profile": "training"}, composition={"components": ["kueue"]})


def test_the_author_renames_and_deletes_a_stack_from_its_page(client, architect, stack):
    client.force_login(architect)
    assert "Rename or delete this stack" in client.get(f"/stacks/{stack.pk}/").content.decode()
    page = client.post(f"/stacks/{stack.pk}/rename/", {"name": "Inference pool, HAMi"}, follow=True).content.decode()
    assert "Renamed to Inference pool, HAMi." in page and Stack.objects.get(pk=stack.pk).name == "Inference pool, HAMi"
    SimulationRun.objects.create(stack=stack, scenario_name="x", scenario={}, seed=1, created_by=architect)
    page = client.post(f"/stacks/{stack.pk}/delete/", follow=True).content.decode()
    assert "Deleted the stack Inference pool, HAMi and its runs." in page
    assert not Stack.objects.filter(pk=stack.pk).exists() and not SimulationRun.objects.exists()


def test_an_empty_name_is_refused_with_the_reason(client, architect, stack):
    client.force_login(architect)
    page = client.post(f"/stacks/{stack.pk}/rename/", {"name": "   "}, follow=True).content.decode()
    assert "A stack&#x27;s name has 1 to 200 characters." in page and Stack.objects.get(pk=stack.pk).name == "#1 auto-named"


def test_another_architect_may_not_change_it_but_a_reviewer_may(client, other_architect, reviewer, stack):
    client.force_login(other_architect)
    assert "Rename or delete this stack" not in client.get(f"/stacks/{stack.pk}/").content.decode()
    client.post(f"/stacks/{stack.pk}/delete/")
    assert Stack.objects.filter(pk=stack.pk).exists()
    client.force_login(reviewer)
    client.post(f"/stacks/{stack.pk}/rename/", {"name": "Reviewed name"})
    assert Stack.objects.get(pk=stack.pk).name == "Reviewed name"


def test_a_stack_a_decision_relies_on_is_not_deleted(client, architect, stacks):
    from placement.decisions.document import DecisionDocument
    from placement.decisions.services import decisions

    record = decisions.decision_propose(DecisionDocument.model_validate(proposal(stacks)), user=architect)
    whole, _ = stacks
    client.force_login(architect)
    page = client.post(f"/stacks/{whole.pk}/delete/", follow=True).content.decode()
    assert f"Not deleted: ADR-{record.pk} relies on this stack" in page and Stack.objects.filter(pk=whole.pk).exists()
