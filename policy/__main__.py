"""Entry point the Pulumi CLI runs for `--policy-pack policy`: it only builds the pack.

`PolicyPack(...)` starts the analyzer's gRPC server and never returns, so nothing may import this file
(tests import `policy.gpu_policies`). The CLI runs it with this folder first on `sys.path`.
"""

import sys
from pathlib import Path

# The policies read the stack's own names (stacknames.py at the repository root, one folder up).
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from gpu_policies import POLICIES  # noqa: E402
from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

PolicyPack(
    name="gpu-platform-guardrails",  # description and version: PulumiPolicy.yaml
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=list(POLICIES),
)
