"""Evaluate the real program offline: Pulumi mocks, the stack files, and a monitor that records the graph.

Used by the tests (to assert what the engine would receive) and by the credential-free plan command.
"""

import toolenv  # noqa: F401  (first: outside .venv, a missing requirement is one line saying how to enter it)
