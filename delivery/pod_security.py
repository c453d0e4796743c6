"""Pod Security admission, offline: would the namespace's `enforce` level admit this pod template?

Implements the Pod Security Standards' `baseline` and `restricted` policies as the built-in PodSecurity
admission plugin checks them at the latest policy version (https://kubernetes.io/docs/concepts/security/
pod-security-standards/; kubernetes/pod-security-admission, policy/check_*.go). `privileged` admits
everything. Checks apply to containers, initContainers and ephemeralContainers alike. No well-kept Python
library implements these rules, and the rule set is small and stable, so it lives here with a unit test
per rule (tests/test_pod_security.py).

Why offline: a pod the namespace refuses is not an error Helm or Pulumi reports well: the controller cannot
create its pods, Helm waits for the workload until its timeout, and everything that depends on the release is
never created. The render check (delivery/render_check.py) runs this on every pod template of the charts'
render and of the program's own objects.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from podspec import POD_TEMPLATES

LEVELS = ("privileged", "baseline", "restricted")
ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"

#: check_capabilities_baseline.go: capabilities a baseline pod may add.
BASELINE_CAPABILITIES = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
    "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
})
#: check_sysctls.go (policy v1.32+): the safe sysctls.
SAFE_SYSCTLS = frozenset({
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
})
#: check_selinuxOptions.go: the SELinux types a baseline pod may set.
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
#: check_restrictedVolumes.go: the volume sources a restricted pod may use.
RESTRICTED_VOLUMES = frozenset({
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret",
})
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"



#: prometheus-operator custom resources whose spec carries the pod fields of the StatefulSet the operator
#: creates (prometheus-operator Documentation/api-reference/api.md: PrometheusSpec, AlertmanagerSpec).
OPERATOR_POD_KINDS = frozenset({"Prometheus", "Alertmanager", "ThanosRuler"})
OPERATOR_POD_FIELDS = ("hostNetwork", "securityContext", "volumes", "containers", "initContainers")


class Violation(NamedTuple):
    """What one rule of `level` refuses, and where (`rule (level): detail` in the render check's report)."""

    level: str
    rule: str
    detail: str


def pod_template(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod (`metadata` + `spec`) an object creates, or None for kinds without pods.

    For a Prometheus, Alertmanager or ThanosRuler the pod fields its spec sets (host network, security context,
    volumes, extra containers): the operator's own containers are not known offline.
    """
    if obj.get("kind") in OPERATOR_POD_KINDS and str(obj.get("apiVersion", "")).startswith("monitoring.coreos.com/"):
        spec = obj.get("spec") or {}
        return {"metadata": spec.get("podMetadata") or {},
                "spec": {k: spec[k] for k in OPERATOR_POD_FIELDS if k in spec}}
    template = POD_TEMPLATES.get(str(obj.get("kind")))
    if template is None:
        return None
    path = template[1]
    node: Any = obj
    for key in path:
        node = (node or {}).get(key)
    return node or {}


def _containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key) or []


def _name(c: Mapping[str, Any]) -> str:
    return f"container {c.get('name', '?')!r}"


def _baseline(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    pod_sc = spec.get("securityContext") or {}
    # HostProcess
    if (pod_sc.get("windowsOptions") or {}).get("hostProcess"):
        yield "hostProcess", "pod securityContext.windowsOptions.hostProcess=true"
    # Host namespaces
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(flag):
            yield "host namespaces", f"{flag}=true"
    # Host ports, privileged, capabilities, /proc mount, per container
    for c in _containers(spec):
        sc = c.get("securityContext") or {}
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            yield "hostProcess", f"{_name(c)} windowsOptions.hostProcess=true"
        if sc.get("privileged"):
            yield "privileged", f"{_name(c)} privileged=true"
        added = set((sc.get("capabilities") or {}).get("add") or []) - BASELINE_CAPABILITIES
        if added:
            yield "capabilities", f"{_name(c)} adds {sorted(added)}"
        ports = [p.get("hostPort") for p in c.get("ports") or [] if p.get("hostPort")]
        if ports:
            yield "host ports", f"{_name(c)} hostPort {ports}"
        if sc.get("procMount") not in (None, "Default"):
            yield "/proc mount", f"{_name(c)} procMount={sc['procMount']}"
    # HostPath volumes
    for vol in spec.get("volumes") or []:
        if "hostPath" in vol:
            yield "hostPath volumes", f"volume {vol.get('name')!r} hostPath {vol['hostPath'].get('path')}"
    # AppArmor (field and the deprecated annotation)
    for where, sc in [("pod", pod_sc), *((_name(c), c.get("securityContext") or {}) for c in _containers(spec))]:
        profile = (sc.get("appArmorProfile") or {}).get("type")
        if profile not in (None, "RuntimeDefault", "Localhost"):
            yield "AppArmor", f"{where} appArmorProfile.type={profile}"
    for key, value in (meta.get("annotations") or {}).items():
        if key.startswith(APPARMOR_ANNOTATION) and value != "runtime/default" and not value.startswith("localhost/"):
            yield "AppArmor", f"annotation {key}={value}"
    # SELinux
    for where, sc in [("pod", pod_sc), *((_name(c), c.get("securityContext") or {}) for c in _containers(spec))]:
        opts = sc.get("seLinuxOptions") or {}
        if opts.get("type", "") not in SELINUX_TYPES:
            yield "SELinux", f"{where} seLinuxOptions.type={opts['type']}"
        for field in ("user", "role"):
            if opts.get(field):
                yield "SELinux", f"{where} seLinuxOptions.{field} is set"
    # Seccomp: not Unconfined
    for where, sc in [("pod", pod_sc), *((_name(c), c.get("securityContext") or {}) for c in _containers(spec))]:
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            yield "seccomp", f"{where} seccompProfile.type=Unconfined"
    # Sysctls
    unsafe = [s.get("name") for s in pod_sc.get("sysctls") or [] if s.get("name") not in SAFE_SYSCTLS]
    if unsafe:
        yield "sysctls", f"unsafe sysctls {unsafe}"


def _restricted(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    pod_sc = spec.get("securityContext") or {}
    windows = (spec.get("os") or {}).get("name") == "windows"
    # Volume types
    for vol in spec.get("volumes") or []:
        kinds = set(vol) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            yield "volume types", f"volume {vol.get('name')!r} uses {sorted(kinds - RESTRICTED_VOLUMES)}"
    for c in _containers(spec):
        sc = c.get("securityContext") or {}
        # Privilege escalation
        if not windows and sc.get("allowPrivilegeEscalation") is not False:
            yield "allowPrivilegeEscalation", f"{_name(c)} must set securityContext.allowPrivilegeEscalation=false"
        # Running as non-root: the container's setting wins over the pod's
        non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
        if non_root is not True:
            yield "runAsNonRoot", f"{_name(c)} must set runAsNonRoot=true (pod or container)"
        if sc.get("runAsUser", pod_sc.get("runAsUser")) == 0:
            yield "runAsUser", f"{_name(c)} runs as UID 0"
        # Seccomp: RuntimeDefault or Localhost, on the pod or on every container
        if not windows:
            profile = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
            if profile not in ("RuntimeDefault", "Localhost"):
                yield "seccomp", f"{_name(c)} must set seccompProfile.type RuntimeDefault or Localhost"
        # Capabilities: drop ALL, add at most NET_BIND_SERVICE
        if not windows:
            caps = sc.get("capabilities") or {}
            if "ALL" not in (caps.get("drop") or []):
                yield "capabilities", f"{_name(c)} must drop ALL capabilities"
            extra = set(caps.get("add") or []) - {"NET_BIND_SERVICE"}
            if extra:
                yield "capabilities", f"{_name(c)} adds {sorted(extra)} (restricted allows only NET_BIND_SERVICE)"
    if pod_sc.get("runAsUser") == 0:
        yield "runAsUser", "pod runs as UID 0"


def check(pod: Mapping[str, Any], level: str) -> list[Violation]:
    """What `level` refuses in `pod` (a Pod or a pod template: `metadata` and `spec`); [] = admitted."""
    if level not in LEVELS:
        raise ValueError(f"unknown Pod Security level {level!r}; expected one of {', '.join(LEVELS)}")
    if level == "privileged":
        return []
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    out = [Violation("baseline", rule, detail) for rule, detail in _baseline(meta, spec)]
    if level == "restricted":
        out += [Violation("restricted", rule, detail) for rule, detail in _restricted(spec)]
    return out


def enforce_level(namespace_labels: Mapping[str, str]) -> str:
    """The namespace's `enforce` level; the admission plugin's default (no label) is `privileged`."""
    return namespace_labels.get(ENFORCE_LABEL, "privileged")
