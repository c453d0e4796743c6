"""Entry point the Pulumi CLI runs for `--policy-pack policy`: it only builds the pack.

`PolicyPack(...)` starts the analyzer's gRPC server and never returns, so nothing may import this file
(tests import `policy.gpu_policies`). The CLI runs it with this folder first on `sys.path`.
"""

from gpu_policies import POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name="gpu-platform-guardrails",  # description and version: PulumiPolicy.yaml
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=list(POLICIES),
)
