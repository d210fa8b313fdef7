"""``python -m memstor.cli ARGS``: the `memstor` command."""

import sys

from memstor.cli import main

sys.exit(main())
