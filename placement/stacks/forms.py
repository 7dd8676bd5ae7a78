"""The compose form: workload classes (one row each), SLO, pool and constraints in, one `ComposeRequest` out."""

from __future__ import annotations

import math
import re

from django import forms

from placement.rules import builtin_rules

WORKLOAD_ROWS = 3
_CLASS_ERROR = re.compile(r"^workloads\[(\d+)\]\.(\w+)$")
_REQUEST_FIELDS = {"pool.gpu_model": "gpu_model", "pool.gpu_count": "gpu_count", "pool.mig_capable": "mig_capable",
                   "profile": "profile", "slo.isolation": "isolation", "slo.goal": "goal",
                   "constraints.require": "require", "constraints.exclude": "exclude", "tenants": "tenants"}
TEAMS_HELP = "How many (4) or their names, separated by commas (vision, nlp, speech, platform)."


def parse_teams(text: str | None) -> int | list[str] | None:
    """A teams field as typed: blank -> None, `4` -> 4, `Vision, nlp` -> ["vision", "nlp"] (a name
    becomes a namespace, so it is lower-cased; the rules engine checks the rest)."""
    text = (text or "").strip()
    if not text:
        return None
    if text.isdigit():
        return int(text)
    return [name.lower() for name in re.split(r"[,;\s]+", text) if name]


def _plain(message: str, plain: dict[str, str]) -> str:
    for phrase, words in (("valid number", plain["float_parsing"]), ("valid integer", plain["int_parsing"]),
                          ("Field required", plain["missing"]), ("should match pattern", plain["string_pattern_mismatch"])):
        if phrase in message:
            return words
    return message.removeprefix("Value error, ")


def _readable(key: str, used_rows: list[WorkloadClassForm]) -> str:
    """`workloads[1]` -> `class chat`; other keys as words."""
    match = re.match(r"^workloads\[(\d+)\](.*)$", key)
    if match and int(match.group(1)) < len(used_rows):
        name = used_rows[int(match.group(1))].cleaned_data.get("name") or f"row {int(match.group(1)) + 1}"
        rest = match.group(2).lstrip(".").replace("_", " ")
        return f"class {name}" + (f", {rest}" if rest else "")
    return key.replace("_", " ").replace(".", ": ")

class WorkloadClassForm(forms.Form):
    """One workload class row of the compose form (prefix w1, w2, ...); a row without a name is unused.
    Numbers are checked by the rules engine's model, so the page and the API give the same errors."""

    name = forms.CharField(label="Class name *", required=False, max_length=40)
    kind = forms.ChoiceField(
        label="Kind", required=False,
        choices=[("training", "training"), ("online_inference", "online inference"),
                 ("batch_inference", "batch inference"), ("interactive", "interactive")],
    )
    replicas = forms.IntegerField(label="Replicas *", required=False)
    gpus_per_replica = forms.FloatField(label="GPUs per replica (<1 = share; blank: from memory)", required=False)
    gpu_memory_gib = forms.FloatField(label="GPU memory per replica (GiB) *", required=False)
    gang = forms.BooleanField(label="Gang", required=False)
    peer_to_peer = forms.BooleanField(label="Peer-to-peer (NVLink)", required=False)
    p99_ms = forms.FloatField(label="P99 target (ms)", required=False)
    tenants = forms.CharField(label="Own teams (if they differ)", required=False, max_length=2000,
                              help_text=TEAMS_HELP)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():  # the row is a table: each input names its column and row
            field.widget.attrs["aria-label"] = f"{field.label}, class row {self.prefix.removeprefix('w')}"

    # What a person means when the engine's model refuses a value, in the column's own words.
    PLAIN = {
        "float_parsing": "Give a number.", "float_type": "Give a number.", "int_parsing": "Give a whole number.",
        "int_type": "Give a whole number.", "missing": "Required for a class with a name.",
        "string_pattern_mismatch": "Lowercase letters, digits and dashes, starting with a letter or digit.",
    }

    def clean(self):
        data = super().clean()
        if data.get("name"):
            for field, message in (("replicas", "How many replicas (pods) this class runs."),
                                   ("gpu_memory_gib", "The GPU memory one replica needs, in GiB.")):
                if data.get(field) is None and field not in self.errors:
                    self.add_error(field, f"Required for a class with a name: {message}")
        return data

    def column_label(self, field: str) -> str:
        return str(self.fields[field].label).rstrip(" *") if field in self.fields else field.replace("_", " ")

    def workload(self) -> dict | None:
        data = self.cleaned_data
        if not data.get("name"):
            return None
        row = {k: data[k] for k in ("name", "kind", "replicas", "gpus_per_replica", "gpu_memory_gib", "gang", "peer_to_peer")}
        if data.get("p99_ms") is not None:
            row["p99_ms"] = data["p99_ms"]
        teams = parse_teams(data.get("tenants"))
        if teams is not None:
            row["tenants"] = teams
        return row


class ComposeForm(forms.Form):
    """Compose input as a GET form, so a composed result is a shareable URL."""

    profile = forms.ChoiceField(label="Workload profile", required=False)
    isolation = forms.ChoiceField(
        label="Isolation",
        required=False,
        choices=[("", "profile default"), ("hard", "hard (memory and fault)"), ("soft", "soft (memory cap)"), ("none", "none")],
    )
    goal = forms.ChoiceField(
        label="Goal",
        required=False,
        choices=[("", "profile default"), ("latency_sensitive", "latency-sensitive"), ("throughput_first", "throughput-first")],
    )
    multi_tenant = forms.ChoiceField(
        label="Tenancy", required=False, choices=[("", "profile default"), ("yes", "several teams"), ("no", "one team")]
    )
    tenants = forms.CharField(
        label="Teams sharing every class", required=False, max_length=2000,
        help_text=TEAMS_HELP + " Each team gets one namespace and one queue; a class with teams of its own keeps them.",
    )
    gpu_model = forms.CharField(label="GPU model", initial="A100-80GB", max_length=40)
    gpu_count = forms.IntegerField(label="GPU count", initial=32, min_value=1, max_value=100000)
    mig_capable = forms.ChoiceField(
        label="MIG capable", required=False, choices=[("", "from the GPU model"), ("yes", "yes"), ("no", "no")]
    )
    require = forms.MultipleChoiceField(label="Require projects", required=False)
    exclude = forms.MultipleChoiceField(label="Exclude projects", required=False)
    keep_default_scheduler = forms.BooleanField(label="Keep the default scheduler", required=False)

    def __init__(self, *args, profiles: list[tuple[str, str]], project_choices: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["profile"].choices = [("", "from the workload classes")] + list(profiles)
        self.fields["require"].choices = project_choices
        self.fields["exclude"].choices = project_choices

    def derive_shares(self, workloads: list[dict]) -> list[str]:
        """A class given its memory but no GPU count gets the share of the pool's GPU that memory is
        (rounded up to 1%); the page shows each derivation. A GPU model the rules do not know derives nothing."""
        model = builtin_rules().gpu_model(self.cleaned_data.get("gpu_model") or "")
        notes = []
        for w in workloads:
            if w.get("gpus_per_replica") is None and model is not None and w.get("gpu_memory_gib"):
                share = min(1.0, math.ceil(w["gpu_memory_gib"] / model.memory_gb * 100) / 100)
                w["gpus_per_replica"] = max(0.01, share)
                notes.append(f"{w['name']}: {w['gpu_memory_gib']:g} GiB of a {model.memory_gb:g} GB {model.model} is "
                             f"{'a whole GPU' if share >= 1 else f'a {share:g} share'} per replica.")
        return notes

    def request_data(self, workloads: list[dict] | None = None) -> dict:
        data = self.cleaned_data
        tri = {"yes": True, "no": False, "": None}
        request: dict = {
            "profile": data["profile"] or None,
            "workloads": workloads or [],
            "pool": {"gpu_model": data["gpu_model"], "gpu_count": data["gpu_count"], "mig_capable": tri[data["mig_capable"]]},
            "constraints": {
                "require": data["require"],
                "exclude": data["exclude"],
                "keep_default_scheduler": data["keep_default_scheduler"],
            },
        }
        teams = parse_teams(data.get("tenants"))
        if teams is not None:
            request["tenants"] = teams
        if data["isolation"] or data["goal"] or data["multi_tenant"]:
            from placement.rules.pools import KIND_PROFILE, MIXED_PROFILE

            kinds = {w["kind"] for w in workloads or []}
            name = data["profile"] or (KIND_PROFILE.get(next(iter(kinds)), MIXED_PROFILE) if len(kinds) == 1 else MIXED_PROFILE)
            default = next((p.default_slo for p in builtin_rules().profiles if p.profile == name), builtin_rules().profiles[0].default_slo)
            request["slo"] = {
                "isolation": data["isolation"] or default.isolation.value,
                "goal": data["goal"] or default.goal,
                "multi_tenant": default.multi_tenant if tri[data["multi_tenant"]] is None else tri[data["multi_tenant"]],
            }
        return request


def apply_compose_errors(form: ComposeForm, used_rows: list[WorkloadClassForm], errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """Put the engine's refusals next to the fields they are about, in the form's words: a class's
    error on its row's column (named by the class), a request field's on that field. Returns what
    belongs to no field (said above the results)."""
    left: dict[str, list[str]] = {}
    for key, messages in errors.items():
        match = _CLASS_ERROR.match(key)
        if match and int(match.group(1)) < len(used_rows) and match.group(2) in used_rows[int(match.group(1))].fields:
            row = used_rows[int(match.group(1))]
            for message in messages:
                row.add_error(match.group(2), _plain(message, row.PLAIN))
        elif key in _REQUEST_FIELDS:
            for message in messages:
                form.add_error(_REQUEST_FIELDS[key], _plain(message, WorkloadClassForm.PLAIN))
        else:
            left.setdefault(_readable(key, used_rows), []).extend(messages)
    return left


