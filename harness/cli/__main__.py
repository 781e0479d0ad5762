"""``python -m harness.cli``: the ``mlx-harness`` command."""

import sys

from harness.cli import main

sys.exit(main())
