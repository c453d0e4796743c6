"""Entry point the Pulumi CLI runs for `--policy-pack policy`: it only builds the pack.

`PolicyPack(...)` starts the analyzer's gRPC server and never returns, so nothing may import this file
(tests import `policy.gpu_policies`). The CLI runs it with this folder first on `sys.path`.
"""

from gpu_policies import POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name="gpu-platform-guardrails",
    description="Guardrails for the Gcore GPU autoscaling platform: pinned charts and images, GPU limits, "
    "safe KEDA fallbacks, GPU pool autohealing off, protected production cluster, GPU hourly budget.",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=list(POLICIES),
)
