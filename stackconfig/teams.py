"""`teams`: the model teams that deploy onto the platform from their own stacks, each in a namespace of its own,
with a GPU quota and a credential that reaches nothing else."""

from __future__ import annotations

from pydantic import Field

from stackconfig.gpu_pool import MAX_POOL_GPUS
from stackconfig.values import DnsLabel, Model


class TeamConfig(Model):
    """One team: its namespace (named as the team) and the most GPUs its pods may request there at once."""

    name: DnsLabel
    #: The namespace's ResourceQuota on `requests.nvidia.com/gpu`: pods past it are refused, whatever KEDA asks.
    gpus: int = Field(ge=0, le=MAX_POOL_GPUS)
