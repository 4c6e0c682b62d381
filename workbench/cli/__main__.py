"""``python -m workbench.cli``: the ``workbench`` command."""

from __future__ import annotations

import sys

from workbench.cli import main

sys.exit(main())
