"""``python -m scheduler_core.traces replay ...`` (see :mod:`scheduler_core.traces.cli`)."""

import sys

from scheduler_core.traces.cli import main

if __name__ == "__main__":
    sys.exit(main())
