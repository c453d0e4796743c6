"""delivery/pod_security.py: each Pod Security Standards rule admits the compliant pod and refuses the violation.

Rules as https://kubernetes.io/docs/concepts/security/pod-security-standards/ states them (policy version latest).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from delivery import pod_security

#: A pod the `restricted` level admits: the starting point every case changes one field of.
RESTRICTED_POD: dict[str, Any] = {
    "metadata": {"annotations": {}},
    "spec": {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{
            "name": "app",
            "image": "app:1",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            "ports": [{"containerPort": 8080}],
        }],
        "initContainers": [{
            "name": "init",
            "image": "init:1",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        }],
        "volumes": [{"name": "cache", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}],
    },
}


def changed(path: str, value: Any) -> dict[str, Any]:
    """RESTRICTED_POD with the dotted `path` set (list indexes as numbers)."""
    pod = copy.deepcopy(RESTRICTED_POD)
    *parents, last = path.split(".")
    node: Any = pod
    for key in parents:
        node = node[int(key)] if key.isdigit() else node.setdefault(key, {})
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return pod


def rules(pod: Mapping[str, Any] | None, level: str) -> set[str]:
    assert pod is not None
    return {v.rule for v in pod_security.check(pod, level)}


def test_the_compliant_pod_passes_every_level() -> None:
    for level in pod_security.LEVELS:
        assert pod_security.check(RESTRICTED_POD, level) == []


BASELINE_CASES = [
    ("spec.securityContext.windowsOptions", {"hostProcess": True}, "hostProcess"),
    ("spec.containers.0.securityContext.windowsOptions", {"hostProcess": True}, "hostProcess"),
    ("spec.hostNetwork", True, "host namespaces"),
    ("spec.hostPID", True, "host namespaces"),
    ("spec.hostIPC", True, "host namespaces"),
    ("spec.containers.0.securityContext.privileged", True, "privileged"),
    ("spec.initContainers.0.securityContext.privileged", True, "privileged"),
    ("spec.containers.0.securityContext.capabilities", {"drop": ["ALL"], "add": ["SYS_ADMIN"]}, "capabilities"),
    ("spec.volumes.0", {"name": "root", "hostPath": {"path": "/"}}, "hostPath volumes"),
    ("spec.containers.0.ports.0", {"containerPort": 8080, "hostPort": 8080}, "host ports"),
    ("spec.containers.0.securityContext.appArmorProfile", {"type": "Unconfined"}, "AppArmor"),
    ("metadata.annotations", {"container.apparmor.security.beta.kubernetes.io/app": "unconfined"}, "AppArmor"),
    ("spec.securityContext.seLinuxOptions", {"type": "spc_t"}, "SELinux"),
    ("spec.containers.0.securityContext.seLinuxOptions", {"user": "system_u"}, "SELinux"),
    ("spec.containers.0.securityContext.procMount", "Unmasked", "/proc mount"),
    ("spec.securityContext.seccompProfile", {"type": "Unconfined"}, "seccomp"),
    ("spec.securityContext.sysctls", [{"name": "kernel.msgmax", "value": "1"}], "sysctls"),
]


@pytest.mark.parametrize(("path", "value", "rule"), BASELINE_CASES, ids=[f"{c[2]}:{c[0]}" for c in BASELINE_CASES])
def test_baseline_refuses(path: str, value: Any, rule: str) -> None:
    pod = changed(path, value)
    assert rule in rules(pod, "baseline")
    assert rule in rules(pod, "restricted")  # restricted includes baseline
    assert pod_security.check(pod, "privileged") == []


BASELINE_ALLOWED = [
    ("spec.containers.0.securityContext.capabilities", {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}),
    ("spec.containers.0.securityContext.appArmorProfile", {"type": "RuntimeDefault"}),
    ("metadata.annotations", {"container.apparmor.security.beta.kubernetes.io/app": "localhost/profile"}),
    ("spec.securityContext.seLinuxOptions", {"type": "container_init_t", "level": "s0:c1"}),
    ("spec.containers.0.securityContext.procMount", "Default"),
    ("spec.securityContext.sysctls", [{"name": "net.ipv4.ip_unprivileged_port_start", "value": "0"}]),
    ("spec.hostNetwork", False),
]


@pytest.mark.parametrize(("path", "value"), BASELINE_ALLOWED, ids=[c[0] for c in BASELINE_ALLOWED])
def test_baseline_admits(path: str, value: Any) -> None:
    assert pod_security.check(changed(path, value), "restricted") == []


RESTRICTED_CASES = [
    ("spec.volumes.0", {"name": "nfs", "nfs": {"server": "x", "path": "/"}}, "volume types"),
    ("spec.containers.0.securityContext.allowPrivilegeEscalation", True, "allowPrivilegeEscalation"),
    ("spec.initContainers.0.securityContext", {"capabilities": {"drop": ["ALL"]}}, "allowPrivilegeEscalation"),
    ("spec.securityContext.runAsNonRoot", False, "runAsNonRoot"),
    ("spec.containers.0.securityContext.runAsNonRoot", False, "runAsNonRoot"),
    ("spec.securityContext.runAsUser", 0, "runAsUser"),
    ("spec.containers.0.securityContext.runAsUser", 0, "runAsUser"),
    ("spec.securityContext.seccompProfile", None, "seccomp"),
    ("spec.containers.0.securityContext.capabilities", {"drop": ["NET_RAW"]}, "capabilities"),
    ("spec.containers.0.securityContext.capabilities", {"drop": ["ALL"], "add": ["CHOWN"]}, "capabilities"),
]


@pytest.mark.parametrize(("path", "value", "rule"), RESTRICTED_CASES, ids=[f"{c[2]}:{c[0]}" for c in RESTRICTED_CASES])
def test_restricted_refuses_what_baseline_admits(path: str, value: Any, rule: str) -> None:
    pod = changed(path, value)
    assert rule in rules(pod, "restricted")
    assert pod_security.check(pod, "baseline") == []


def test_container_settings_satisfy_restricted_without_pod_settings() -> None:
    pod = copy.deepcopy(RESTRICTED_POD)
    pod["spec"]["securityContext"] = {}
    for c in pod["spec"]["containers"] + pod["spec"]["initContainers"]:
        c["securityContext"].update(runAsNonRoot=True, seccompProfile={"type": "Localhost", "localhostProfile": "p"})
    assert pod_security.check(pod, "restricted") == []


def test_pod_templates_of_every_workload_kind() -> None:
    pod = copy.deepcopy(RESTRICTED_POD)
    assert pod_security.pod_template({"kind": "Deployment", "spec": {"template": pod}}) == pod
    assert pod_security.pod_template({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": pod}}}}) == pod
    assert pod_security.pod_template({"kind": "Pod", **pod}) == {"kind": "Pod", **pod}
    assert pod_security.pod_template({"kind": "Service", "spec": {}}) is None


def test_prometheus_operator_resources_are_checked_by_their_pod_fields() -> None:
    prometheus = {"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus", "spec": {
        "retention": "15d", "securityContext": {"runAsNonRoot": True},
        "volumes": [{"name": "host", "hostPath": {"path": "/var/log"}}]}}
    pod = pod_security.pod_template(prometheus)
    assert pod == {"metadata": {}, "spec": {"securityContext": {"runAsNonRoot": True},
                                            "volumes": [{"name": "host", "hostPath": {"path": "/var/log"}}]}}
    assert rules(pod, "baseline") == {"hostPath volumes"}


def test_enforce_level_and_unknown_levels() -> None:
    assert pod_security.enforce_level({pod_security.ENFORCE_LABEL: "baseline"}) == "baseline"
    assert pod_security.enforce_level({}) == "privileged"  # the admission plugin's default
    with pytest.raises(ValueError, match="unknown Pod Security level 'strict'"):
        pod_security.check(RESTRICTED_POD, "strict")
