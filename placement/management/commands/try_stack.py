import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from placement.stacks.models import Stack


class Command(BaseCommand):
    help = ("Try a saved stack on a local control plane (etcd, kube-apiserver, controller-manager, kube-scheduler, "
            "KWOK, Kueue; built by controlplane/build.sh): per workload whether Kueue admitted it, where its pods "
            "were bound or why they wait, beside the simulator's answer. Ports: ATLAS_CONTROLPLANE_PORT_BASE.")

    def add_arguments(self, parser):
        parser.add_argument("stack_id", type=int)
        parser.add_argument("--json", dest="json_out", help="also write the whole trial as JSON to this file")
        parser.add_argument("--run", help="take the numbers from this run of the stack")
        parser.add_argument("--scenario", help="take the numbers from this built-in scenario")

    def handle(self, *args, stack_id, json_out, run, scenario, **options):
        from placement.deploy.localplane import ComponentFailed
        from placement.deploy.services.trial import try_stack

        stack = Stack.objects.filter(pk=stack_id).first()
        if stack is None:
            raise CommandError(f"stack_id: no stack {stack_id}")
        try:
            trial = try_stack(stack, run_id=run, scenario_name=scenario, progress=lambda m: self.stderr.write(m))
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
        except ComponentFailed as exc:
            raise CommandError(str(exc)) from None
        if json_out:
            Path(json_out).write_text(json.dumps(trial, indent=2), encoding="utf-8")
        self.stdout.write(render(trial))


def render(trial: dict) -> str:
    lines = [f"stack {trial['stack']} ({trial['name']}): {trial['source']}", f"{trial['nodes']} KWOK nodes"]
    for r in trial["rejected"]:
        lines.append(f"REJECTED {r['file']} {r['kind']}/{r['name']}: {r['message']}")
    for w in trial["workloads"]:
        admitted = {None: "not under Kueue", True: "admitted", False: "not admitted"}[w["admitted"]]
        where = ", ".join(f"{n} x{c}" for n, c in sorted(w["bound"].items())) or "no pod bound"
        agree = {None: "-", True: "agree", False: "DISAGREE"}[w["agree"]]
        lines.append(f"{w['kind']} {w['namespace']}/{w['name']}: {admitted}; {where} | simulator: {w['sim_state']}"
                     f" {','.join(w['sim_nodes'])} | {agree}")
        for m in ([w["admission_message"]] if w["admission_message"] and not w["admitted"] else []) + w["pending_messages"]:
            lines.append(f"    {m}")
        if w["note"]:
            lines.append(f"    note: {w['note']}")
    agree = trial["agreement"]
    lines.append(f"agreement: {agree['agree']}/{agree['judged']}" + ("" if trial["settled"] else " (controllers still acting at the timeout)"))
    return "\n".join(lines)
