from pathlib import Path

import yaml
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from placement.deploy.services.imports import decode_snapshot_file, snapshot_scenario, upload_budget


class Command(BaseCommand):
    help = ("Turn `kubectl get nodes -o json`, `kubectl get pods -A -o json` and optionally Kueue ClusterQueues/"
            "LocalQueues/ResourceFlavors or Volcano Queues (one JSON list) into a scenario YAML. Every problem is "
            "reported per object and nothing is written unless the whole snapshot is understood.")

    def add_arguments(self, parser):
        parser.add_argument("nodes")
        parser.add_argument("pods")
        parser.add_argument("queues", nargs="?")
        parser.add_argument("-o", "--output", help="scenario file to write (default: print to stdout)")
        parser.add_argument("--name", default="imported-cluster")
        parser.add_argument("--horizon", default="24h", help="how long to simulate, e.g. 12h")

    def handle(self, *args, nodes, pods, queues, output, name, horizon, **options):
        try:
            # Keyed by the file's path: a problem prints as `file: where: reason`.
            kept = upload_budget()  # what the three files keep together
            docs = [self._decode(path, kind, kept) if path else None
                    for path, kind in ((nodes, "nodes"), (pods, "pods"), (queues, "queues"))]
            document = snapshot_scenario(*docs, name=name, horizon=horizon)
        except ValidationError as exc:
            lines = [f"{field}: {message}" for field, messages in exc.message_dict.items() for message in messages]
            raise CommandError("nothing written:\n" + "\n".join(lines)) from None
        text = yaml.safe_dump(document, sort_keys=False, width=120)
        if output:
            Path(output).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {output}: {document['description']}")
        else:
            self.stdout.write(text)

    @staticmethod
    def _decode(path: str, kind: str, kept):
        try:
            with Path(path).open("rb") as handle:
                return decode_snapshot_file(handle, path, kind, kept)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
