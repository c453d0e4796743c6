"""Kubernetes facts about pods that config, the render check and the policy pack all apply, written once.

Where each kind keeps its pod template, and when a container image reference is pinned to one build. Plain Python
with no import of Pulumi or pydantic, so the policy pack (run by the Pulumi CLI with only `pulumi-policy`) can read
it too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: Kinds that create pods: (group/version as Pulumi's type token spells it, path to the pod template).
POD_TEMPLATES: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "Pod": ("core/v1", ()),
    "Deployment": ("apps/v1", ("spec", "template")),
    "DaemonSet": ("apps/v1", ("spec", "template")),
    "StatefulSet": ("apps/v1", ("spec", "template")),
    "ReplicaSet": ("apps/v1", ("spec", "template")),
    "ReplicationController": ("core/v1", ("spec", "template")),
    "Job": ("batch/v1", ("spec", "template")),
    "CronJob": ("batch/v1", ("spec", "jobTemplate", "spec", "template")),
}

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def image_unpinned(image: str) -> str | None:
    """Why an image reference may pull a different build on every node, or None when it is pinned.

    Pinned: a digest (`@sha256:` and 64 lowercase hex digits) or a tag other than `latest`. The reasons:
    `"digest"` (a malformed digest), `"untagged"` (no tag means `latest`), `"latest"`.
    """
    if "@" in image:
        return None if _DIGEST.fullmatch(image.split("@", 1)[1]) else "digest"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "untagged"
    if last.rsplit(":", 1)[1].lower() == "latest":
        return "latest"
    return None
