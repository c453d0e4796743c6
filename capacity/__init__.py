"""What-if: replay a demand trace through a stack's real scaling settings (`python -m capacity`)."""

import toolenv  # noqa: F401  (first: outside .venv, a missing requirement is one line saying how to enter it)
