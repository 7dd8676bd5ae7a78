"""A webhook receiver that enforces the Atlas' replay-proof signature (standard library only).

    ATLAS_WEBHOOK_SECRET=... python examples/webhook_receiver.py 8080

Every delivery carries X-Atlas-Timestamp (Unix seconds of the attempt), X-Atlas-Delivery (its id)
and X-Atlas-Signature-256 = "sha256=" + hex HMAC-SHA256(secret, "<timestamp>.<delivery id>.<body>").
`verify` accepts a delivery only when the signature matches (compared in constant time), the
timestamp is within TOLERANCE_SECONDS of now (either way) and the delivery id has not been accepted
before inside that window; a replay is refused even with a valid signature. A retried delivery has
the same id: answer 2xx once you have it, and the Atlas stops sending.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

TOLERANCE_SECONDS = 300


class Refused(Exception):
    pass


class Receiver:
    def __init__(self, secret: str, tolerance: int = TOLERANCE_SECONDS):
        self.secret, self.tolerance = secret.encode(), tolerance
        self.seen: dict[str, int] = {}  # delivery id -> timestamp, kept for the window

    def verify(self, headers, body: bytes, now: float | None = None) -> None:
        """Raise Refused unless the delivery is authentic, fresh and new."""
        now = time.time() if now is None else now
        try:
            timestamp = int(headers["X-Atlas-Timestamp"])
            delivery = headers["X-Atlas-Delivery"]
            signature = headers["X-Atlas-Signature-256"]
        except (KeyError, TypeError, ValueError):
            raise Refused("missing or malformed signature headers") from None
        expected = "sha256=" + hmac.new(self.secret, f"{timestamp}.{delivery}.".encode() + body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, signature):
            raise Refused("bad signature")
        if abs(now - timestamp) > self.tolerance:
            raise Refused(f"timestamp outside the {self.tolerance} s window")
        self.seen = {d: t for d, t in self.seen.items() if now - t <= self.tolerance}
        if delivery in self.seen:
            raise Refused("delivery already received")
        self.seen[delivery] = timestamp


def serve(port: int, secret: str) -> None:
    receiver = Receiver(secret)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                receiver.verify(self.headers, body)
            except Refused as exc:
                self.send_response(400)
                self.end_headers()
                self.wfile.write(str(exc).encode())
                return
            self.send_response(204)
            self.end_headers()

    HTTPServer(("0.0.0.0", port), Handler).serve_forever()


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 8080, os.environ["ATLAS_WEBHOOK_SECRET"])
