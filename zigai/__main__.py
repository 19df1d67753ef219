"""``python -m zigai``: the same command as the ``zigai`` console script."""

from __future__ import annotations

import sys

from zigai.cli import main

if __name__ == "__main__":
    sys.exit(main())
