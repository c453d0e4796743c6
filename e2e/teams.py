"""What a team's kubeconfig (TeamAccess, gpu_platform/team.py) may do against the real API server, with RBAC and
quota admission on: what GpuWorkload creates in its namespace, and nothing of the platform's, nothing cluster-wide,
no pod past its GPU quota or at a system priority, no Service outside the cluster."""

from __future__ import annotations

import functools

from e2e.harness import Kube, wait_for


def check_team_access(team: Kube, namespace: str, gpus: int, platform_namespace: str) -> None:
    """`team`: kubectl with the team's kubeconfig; `gpus`: its quota; `platform_namespace`: where the platform's own
    `inference` runs."""

    def can(verb: str, what: str, ns: str | None = None) -> bool:
        where = ["-n", ns] if ns else []
        return team.run("auth", "can-i", verb, what, *where, check=False).stdout.strip() == "yes"

    for kind in ("deployments.apps", "scaledobjects.keda.sh", "poddisruptionbudgets.policy", "services", "secrets",
                 "podmonitors.monitoring.coreos.com"):
        assert can("create", kind, namespace), kind
        assert not can("create", kind, platform_namespace), kind
    assert not can("list", "nodes") and not can("create", "namespaces")
    assert not can("create", "rolebindings", namespace)
    assert team.run("auth", "can-i", "create", "pods", "--subresource=exec", "-n", namespace,
                    check=False).stdout.strip() == "no"
    refused = team.run("delete", "deployment", "inference", "-n", platform_namespace, "--dry-run=server", check=False)
    assert refused.returncode != 0 and "forbidden" in refused.stderr, refused.stderr
    # A billed Gcore load balancer, a port on every node: the quota refuses both.
    for kind in ("loadbalancer", "nodeport"):
        refused = team.run("create", "service", kind, f"x-{kind}", "--tcp=80", "-n", namespace, check=False)
        assert refused.returncode != 0 and "exceeded quota" in refused.stderr, refused.stderr
    # One GPU more than the quota, and a pod at a system PriorityClass: their ReplicaSets' pods are refused by the
    # quotas, not scheduled.
    pods = {"too-big": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                        "resources": {"limits": {"nvidia.com/gpu": str(gpus + 1)}}}]},
            "critical": {"priorityClassName": "system-node-critical",
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}
    for app, pod in pods.items():
        team.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": app, "namespace": namespace},
                     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": app}},
                              "template": {"metadata": {"labels": {"app": app}}, "spec": pod}}})

    def quota_refusal(app: str) -> str:
        for rs in team.get("replicasets", "-n", namespace, "-l", f"app={app}")["items"]:
            for c in rs.get("status", {}).get("conditions", []):
                if c["type"] == "ReplicaFailure" and "exceeded quota" in c.get("message", ""):
                    return str(c["message"])
        return ""

    for app, said in (("too-big", f"requests.nvidia.com/gpu={gpus + 1}"), ("critical", "system-priority")):
        message = wait_for(f"the quota's refusal of {app}", functools.partial(quota_refusal, app), timeout=60)
        assert said in message, message
        team.run("delete", "deployment", app, "-n", namespace, "--wait=true")


