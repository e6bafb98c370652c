"""``python -m kmt_ref`` — see :mod:`kmt_ref.cli`."""
import sys

from .cli import main

sys.exit(main())
