"""Evaluate the real program offline: Pulumi mocks, the stack files, and a monitor that records the graph.

Used by the tests (to assert what the engine would receive) and by the credential-free plan command.
"""
