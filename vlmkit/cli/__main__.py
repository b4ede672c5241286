"""`python -m vlmkit.cli ARGS`: the `vlmkit` command."""

import sys

from vlmkit.cli.main import main

sys.exit(main())
