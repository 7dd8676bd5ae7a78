"""Which simulator produced a result: a digest of the simulator's own source files.

Stored evidence is reused only when the same simulator would compute it again; after any change to
the model, re-running a decision's evidence really recomputes it.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def code_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE_DIR)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
