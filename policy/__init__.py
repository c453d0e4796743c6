"""Policy pack folder (`pulumi preview --policy-pack policy`).

A package only so that tests import `policy.gpu_policies` from the repository root; the Pulumi CLI runs
`policy/__main__.py` as a script with this folder on `sys.path` and never imports this file.
"""
