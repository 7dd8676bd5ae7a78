"""The decision record form: friendly fields in, one `DecisionDocument` out (the API takes the same
document as JSON)."""

from __future__ import annotations

from django import forms
from pydantic import ValidationError

from placement.catalog.models import Project
from placement.decisions.document import RING_ORDER, DecisionDocument
from placement.evidence.models import SimulationRun, Sweep
from placement.evidence.selectors.runs import scenario_label
from placement.stacks.models import Stack

RING_ROWS = 6
TEXTAREA = forms.Textarea(attrs={"rows": 3})
RING_CHOICES = [("", "—")] + [(r, r.title()) for r in RING_ORDER]


class DecisionForm(forms.Form):
    title = forms.CharField(max_length=200, help_text="What was decided, e.g. “Pool training: whole GPUs + Kueue + JobSet”.")
    context_text = forms.CharField(
        label="Context", required=False, widget=TEXTAREA,
        help_text="The workload classes, SLO and constraints, in words (the options' compose request is kept too).",
    )
    options = forms.TypedMultipleChoiceField(
        coerce=int, widget=forms.CheckboxSelectMultiple, label="Options considered (saved stacks)"
    )
    chosen = forms.TypedChoiceField(coerce=int, empty_value=None, required=False, label="Chosen option")
    evidence_runs = forms.TypedMultipleChoiceField(
        coerce=int, required=False, widget=forms.CheckboxSelectMultiple, label="Evidence: simulation runs"
    )
    evidence_sweeps = forms.TypedMultipleChoiceField(
        coerce=int, required=False, widget=forms.CheckboxSelectMultiple, label="Evidence: sweeps"
    )
    consequences = forms.CharField(required=False, widget=TEXTAREA)
    supersedes = forms.TypedChoiceField(coerce=int, empty_value=None, required=False, label="Supersedes (an accepted record)")
    reason = forms.CharField(widget=TEXTAREA, help_text="Why you propose this record (required, as for catalog changes).")

    def __init__(self, *args, superseded_choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        stacks = list(Stack.objects.order_by("-created_at").values_list("pk", "name")[:100])
        self.fields["options"].choices = stacks
        self.fields["chosen"].choices = [("", "— not decided yet —")] + stacks
        stack_ids = [pk for pk, _ in stacks]
        runs = SimulationRun.objects.filter(stack_id__in=stack_ids, status=SimulationRun.SUCCEEDED).order_by("-created_at")
        self.fields["evidence_runs"].choices = [
            (r.pk, f"run {r.pk}: {r.stack.name if r.stack else 'no stack'} on {scenario_label(r.scenario_name)} (seed {r.seed})")
            for r in runs.select_related("stack").only("pk", "scenario_name", "seed", "stack__name")[:100]
        ]
        self.fields["evidence_sweeps"].choices = [(s.pk, f"sweep {s.pk}: {s.name}") for s in Sweep.objects.all()[:50]]
        self.fields["supersedes"].choices = [("", "—")] + list(superseded_choices)
        projects = [("", "—")] + list(Project.objects.filter(accepted=True).order_by("name").values_list("slug", "name"))
        for i in range(RING_ROWS):
            self.fields[f"ring_project_{i}"] = forms.ChoiceField(choices=projects, required=False, label="Project")
            self.fields[f"ring_{i}"] = forms.ChoiceField(choices=RING_CHOICES, required=False, label="Ring")
            self.fields[f"ring_reason_{i}"] = forms.CharField(required=False, max_length=2000, label="Why")

    def ring_rows(self):
        return [(self[f"ring_project_{i}"], self[f"ring_{i}"], self[f"ring_reason_{i}"]) for i in range(RING_ROWS)]

    def document(self, context: dict) -> DecisionDocument | None:
        """The validated document, or None with the errors put on the fields they belong to."""
        self.is_valid()  # collect every field's errors, the ring rows' included, in one answer
        data = self.cleaned_data
        rings = []
        for i in range(RING_ROWS):
            project, ring = data.get(f"ring_project_{i}"), data.get(f"ring_{i}")
            if project and ring:
                rings.append({"project": project, "ring": ring, "reason": data.get(f"ring_reason_{i}", "")})
            elif project or ring:
                self.add_error(f"ring_{i}" if project else f"ring_project_{i}", "Give both the project and its ring.")
        if self.errors:
            return None
        try:
            return DecisionDocument.model_validate(
                {
                    "title": data["title"],
                    "context": context,
                    "context_text": data["context_text"],
                    "options": data["options"],
                    "chosen": data["chosen"],
                    "evidence_runs": data["evidence_runs"],
                    "evidence_sweeps": data["evidence_sweeps"],
                    "consequences": data["consequences"],
                    "rings": rings,
                    "supersedes": data["supersedes"],
                    "reason": data["reason"],
                }
            )
        except ValidationError as exc:
            for error in exc.errors():
                loc = [str(p) for p in error["loc"]]
                name = loc[0] if loc and loc[0] in self.fields else None
                self.add_error(name, error["msg"])
            return None
