"""Entry point of `python -m capacity`."""

import sys

from capacity import native

native.use()  # the compiled simulator, when built for these sources (capacity/native.py); before it is imported

from capacity.cli import main  # noqa: E402

sys.exit(main())
