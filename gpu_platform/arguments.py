"""What every component of the package does with its arguments: read them as the stack file's keys, and refuse bad
ones the way Pulumi reports bad component inputs."""

from typing import Any

import pulumi
from pydantic.alias_generators import to_camel

from stackconfig import ConfigError, Problem


def whole(value: Any) -> Any:
    """Whole numbers as the ints the schema declares, in nested objects and lists too: the Python provider host
    hands integer inputs over as the floats they travel as (pulumi 3.272, provider/experimental/component.py
    `map_input_properties`: its int() conversion is overwritten by the plain assignment after it). Any other value
    is the model's to judge."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole(v) for v in value]
    return value


def camel(value: Any) -> Any:
    """An argument object's keys (the schema's properties, which arrive under their Python names through the
    provider host: `min_nodes`) in the stack file's words, in it and in the objects of a list of them; not in
    the maps it holds (labels, env), whose keys are the user's."""
    if isinstance(value, dict):
        return {to_camel(k): v for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def refuse(component: pulumi.Resource, kind: str, problems: list[Problem]) -> None:
    """Pulumi's error for bad component inputs: the engine shows each argument's path with its reason (the Python
    SDK's counterpart of pulumi-eks's `ResourceError`). Nothing when there are no problems."""
    if not problems:
        return None
    named = [Problem(p.key.lstrip("."), p.value, p.message, p.fix) for p in problems]
    message = str(ConfigError(named)).replace("invalid stack configuration", f"invalid {kind} arguments")
    raise pulumi.InputPropertiesError(
        f"{component._name}: {message}",
        [{"property_path": p.key, "reason": f"{p.value!r} {p.message}. Fix: {p.fix}"} for p in named])


