"""``python -m scheduler_core``: see :mod:`scheduler_core.cli`."""

import sys

from scheduler_core.cli import main

sys.exit(main())
