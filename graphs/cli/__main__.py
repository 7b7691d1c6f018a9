"""`python -m graphs.cli`: the same as the `grasp` console script."""

import sys

from graphs.cli.main import main

sys.exit(main())
