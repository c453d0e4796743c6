"""Value types of the stack file: one pydantic type per kind of value, each with the rule and the fix it reports.

A section (stackconfig/cluster.py, workloads.py, ...) declares its keys with these types, so `gpuPool.labels`
and `workloads[].env` are checked by the same rule and a mistake gets the same message wherever it is made.
`Model` is the base of every section: frozen, camelCase keys in stack files, unknown keys refused.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from docker_image import reference
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from podspec import image_unpinned
from stackconfig.units import CPU_QUANTITY, MEMORY_QUANTITY, PROMETHEUS_DURATION, is_number
from stacknames import SECRETS_NAMESPACE

#: Gcore cluster and pool names (API K8sClusterCreateV2Serializer): 2-20 chars.
GCORE_NAME = re.compile(r"^[a-z][a-z0-9\-]{0,18}[a-z0-9]$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
#: A Service name is a DNS-1035 label: a letter first (k8s.io/apimachinery pkg/util/validation, IsDNS1035Label).
DNS_1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
#: Pod names are `<deployment>-<hash up to 10>-<5>`, truncated by Kubernetes at 58+5 chars; a name of at
#: most 40 keeps every pod name whole, so the query's pod regex matches all of the workload's pods.
WORKLOAD_NAME_MAX = 40
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def invalid(reason: str, fix: str) -> PydanticCustomError:
    """What a value validator raises: the reason (after the key and value) and the fix, in our words."""
    return PydanticCustomError("invalid_value", "{reason}", {"reason": reason, "fix": fix})


def _form(pattern: str | re.Pattern[str], reason: str, fix: str, longest: int = 1000) -> AfterValidator:
    """Text that must match `pattern` whole, in at most `longest` characters; else `reason` and `fix`."""

    def check(value: str) -> str:
        if len(value) > longest or not re.fullmatch(pattern, value):
            raise invalid(reason, fix)
        return value

    return AfterValidator(check)


def _workload_name(value: str) -> str:
    """The name of the workload's Deployment, Service, ScaledObject, PDB and (`keda-hpa-<name>`) HPA."""
    if len(value) > WORKLOAD_NAME_MAX:
        raise invalid(
            f"has {len(value)} characters; a workload name may have at most {WORKLOAD_NAME_MAX}, so that Kubernetes "
            "never truncates its pod names (`<name>-<hash>-<5>`) and the scaling query finds every pod",
            f"shorten it to at most {WORKLOAD_NAME_MAX} characters",
        )
    if not DNS_1035_LABEL.match(value):
        if DNS_1035_LABEL.match(value.lower()):
            fix = f"write it in lowercase: '{value.lower()}'"
        elif value[:1].isdigit() and DNS_LABEL.match(value):
            fix = f"start it with a letter, e.g. 'llm-{value}'"
        else:
            fix = "use lowercase letters, digits and '-', starting with a letter and ending with a letter or digit"
        raise invalid(
            "is not a DNS-1035 label, which the workload's Service name must be (lowercase letters, digits and "
            "'-', a letter first)", fix,
        )
    return value


def _label_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix)):
        return False
    return len(name) <= 63 and bool(LABEL_NAME.match(name))


def _labels(value: dict[str, str]) -> dict[str, str]:
    for key, val in value.items():
        if not _label_key(key):
            raise invalid(f"has the label key {key!r}, which is not a valid Kubernetes label key",
                           "use '[prefix/]name' with name ≤ 63 chars of [A-Za-z0-9-_.]")
        if val and (len(val) > 63 or not LABEL_NAME.match(val)):
            raise invalid(f"has the label value {val!r} (key {key!r}), which is not a valid Kubernetes label value",
                           "use ≤ 63 chars of [A-Za-z0-9-_.], starting and ending alphanumeric")
    return value


def _taints(value: dict[str, str]) -> dict[str, str]:
    for key, spec in value.items():
        taint_value, sep, effect = spec.rpartition(":")
        if not _label_key(key) or not sep or effect not in TAINT_EFFECTS or (
            taint_value and not LABEL_NAME.match(taint_value)
        ):
            raise invalid(
                f"has the taint {key!r}: {spec!r}, which is not in Gcore's form 'key: value:Effect'",
                f"write it like 'nvidia.com/gpu: present:NoSchedule'; Effect is one of {', '.join(TAINT_EFFECTS)}",
            )
    return value


_PIN = "pin a version tag or a digest, e.g. 'registry.example.com/app:1.4.2'"
#: Why an image is refused (podspec.image_unpinned's reasons) and the fix.
_UNPINNED = {
    "digest": ("has a digest that is not 'sha256:' followed by 64 lowercase hex digits",
               "copy the full digest, e.g. 'registry.example.com/app@sha256:<64 hex>'"),
    "untagged": ("has no tag, so every node may pull a different build", _PIN),
    "latest": ("is tagged 'latest', so every node may pull a different build", _PIN),
}


#: How a reference is written: the grammar of distribution/reference (github.com/distribution/reference, regexp.go).
_REFERENCE_FORM = "[registry[:port]/]path[:tag][@sha256:<64 hex>], e.g. 'registry.example.com/team/app:1.4.2'"


def _reference_problem(value: str) -> PydanticCustomError | None:
    """Why the container runtime could not parse `value` as an image reference, or None.

    The grammar is distribution/reference's (the Go module every runtime parses with), through docker-image-py's
    port of its regexp.go, with Docker's short-name normalisation (`nginx:1` is `docker.io/library/nginx:1`).
    Kubernetes itself accepts any string as an image, so without this a typo surfaces only as a pod stuck in
    InvalidImageName on the node.
    """
    try:
        reference.Reference.parse_normalized_named(value)
    except reference.InvalidReference as exc:
        if any(c.isspace() for c in value):
            return invalid("contains whitespace, which no image reference may hold",
                           "remove the spaces (" + _REFERENCE_FORM + ")")
        if "must be lowercase" in str(exc):
            name, sep, rest = _split_reference(value)
            return invalid("has uppercase letters in its repository path; registries and the container runtime "
                           "accept only lowercase there (the registry host and the tag may have uppercase)",
                           f"write '{_lower_path(name)}{sep}{rest}'")
        if "@" in value and image_unpinned(value) == "digest":
            return None  # the pinning check below names what is wrong with the digest
        return invalid(f"is not an image reference the container runtime can parse ({exc})",
                       "write it as " + _REFERENCE_FORM)
    return None


def _split_reference(value: str) -> tuple[str, str, str]:
    """(name, separator, tag-or-digest) of a reference: the tag is after the last ':' of the last path part."""
    name, at, digest = value.partition("@")
    head, slash, last = name.rpartition("/")
    repo, colon, tag = last.partition(":")
    if at:
        return f"{head}{slash}{repo}", (colon or "@"), (f"{tag}@{digest}" if colon else digest)
    return f"{head}{slash}{repo}", colon, tag


def _lower_path(name: str) -> str:
    """The repository path in lowercase; the registry host (first part with a '.' or ':', or localhost) kept."""
    first, slash, rest = name.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return f"{first}/{rest.lower()}"
    return name.lower()


def _image(value: str) -> str:
    problem = _reference_problem(value)
    if problem is not None:
        raise problem
    reason = image_unpinned(value)
    if reason is not None:
        raise invalid(*_UNPINNED[reason])
    return value


def _env(value: dict[str, str]) -> dict[str, str]:
    for key in value:
        if not ENV_NAME.match(key):
            raise invalid(f"has the environment variable name {key!r}, which is not valid",
                           "use letters, digits, '_', '-' or '.', not starting with a digit")
    return value


# --- values in the wrong unit (docs/configuration-checks.md) ---------------------------------------------------


def _memory(value: Any) -> Any:
    if value is None:
        return value
    if is_number(value):
        raise invalid("has no unit, and Kubernetes reads a bare memory number as bytes",
                       f"write '{value}Gi' (or Mi)")
    if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?m", value):
        raise invalid("is in millibytes: 'm' means 1/1000 in Kubernetes quantities", f"write '{value[:-1]}Mi'")
    if not isinstance(value, str) or not MEMORY_QUANTITY.match(value):
        raise invalid("is not a Kubernetes memory quantity", "write it like '64Gi' or '512Mi'")
    return value


def _cpu(value: Any) -> Any:
    if is_number(value):  # cores: 8, 0.5 and "8" are all valid quantities
        value = str(value)
    if value is not None and (not isinstance(value, str) or not CPU_QUANTITY.match(value)):
        raise invalid("is not a Kubernetes CPU quantity", "write cores like '8' or '0.5', or millicores like '500m'")
    return value


def _storage_size(value: Any) -> Any:
    if value is None:
        return value
    if is_number(value):
        raise invalid("has no unit, and Kubernetes reads a bare size as bytes", f"write '{value}Gi'")
    if not isinstance(value, str) or not re.fullmatch(r"\d+(Mi|Gi|Ti)", value):
        raise invalid("is not a volume size in Mi, Gi or Ti", "write it like '200Gi'")
    return value


def _retention(value: Any) -> Any:
    if is_number(value):
        raise invalid("has no unit, and Prometheus reads retention as a duration", f"write '{value}d'")
    if not isinstance(value, str) or not PROMETHEUS_DURATION.match(value):
        raise invalid("is not a Prometheus duration", "write it like '15d' or '36h' (units ms, s, m, h, d, w, y)")
    return value


def _percent(value: float) -> float:
    if value <= 1:
        raise invalid(
            f"looks like a fraction, but this is a percentage: {value} would hold each GPU at {value} % utilisation, "
            "so the workload would sit at maxReplicas under any load",
            f"write {value * 100:g} for {value * 100:g} %",
        )
    return value


def _fraction(value: float) -> float:
    if 2 <= value <= 100:
        raise invalid("looks like a percentage, but this is a fraction of 1 (0.8 is 80 %)",
                      f"write {value / 100:g} for {value:g} %")
    if value > 1:
        raise invalid("must be at most 1 (a fraction: 0.8 is 80 %)", "use a value ≤ 1")
    return value


# --- cron windows (KEDA's cron scaler) ----------------------------------------------------------------------

_CRON_NAMES = frozenset((
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT",
))


def _cron(value: str) -> str:
    """A 5-field cron expression as KEDA's cron scaler parses it (Minute Hour Dom Month Dow).

    KEDA parses with robfig/cron's standard parser, which knows no seconds field and none of the `L`, `W`
    or `#` extensions that croniter would accept; croniter then checks the ranges (minute 0-59, ...).
    """
    fields = value.split()
    if len(fields) != 5:
        raise invalid(f"has {len(fields)} field(s); KEDA's cron scaler takes 5 (minute hour day month weekday)",
                       "write it like '0 8 * * 1-5' (08:00 Monday to Friday)")
    for part in fields:
        for token in re.split(r"[,/-]", part):
            if not (token.isdigit() or token in ("*", "?") or token.upper() in _CRON_NAMES):
                raise invalid(f"has the field {part!r}, which is not standard cron (digits, '*', ',', '-', '/', "
                              "month or weekday names)", "write it like '0 8 * * 1-5' (08:00 Monday to Friday)")
    if not croniter.is_valid(value):
        raise invalid("is out of range for cron (minute 0-59, hour 0-23, day 1-31, month 1-12, weekday 0-6)",
                       "write it like '0 8 * * 1-5' (08:00 Monday to Friday)")
    return " ".join(fields)


def _timezone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise invalid("is not a time zone name of the IANA database",
                       "use a name such as 'Europe/Luxembourg', 'America/New_York' or 'UTC'") from None
    return value


# --- serving (ports, secrets, paths, metrics) -----------------------------------------------------------------

PORT_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SECRET_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
PROMETHEUS_METRIC = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def _http_url(value: str) -> str:
    parsed = urllib.parse.urlsplit(value)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise invalid("is not an http(s) URL with a host", "write it like 'http://prometheus.monitoring:9090'")
    return value.rstrip("/")


MemoryQuantity = Annotated[str | None, BeforeValidator(_memory)]
CpuQuantity = Annotated[str | None, BeforeValidator(_cpu)]
StorageSize = Annotated[str | None, BeforeValidator(_storage_size)]
Retention = Annotated[str, BeforeValidator(_retention)]
Percent = Annotated[float, AfterValidator(_percent)]
#: A share of 1 (0.8 is 80 %); a percentage given instead is refused with the fraction to write.
Fraction = Annotated[float, AfterValidator(_fraction)]

GcoreName = Annotated[str, _form(
    GCORE_NAME, "is not a name Gcore accepts: 2-20 characters, a lowercase letter first, then lowercase letters, "
    "digits or '-', not ending in '-'", "pick a short name such as 'gpu-prod'")]
DnsLabel = Annotated[str, _form(
    DNS_LABEL, "is not a DNS-1123 label, which Kubernetes needs here (lowercase letters, digits, '-', at most 63 "
    "characters)", "use lowercase letters, digits and '-' only", longest=63)]
WorkloadName = Annotated[str, AfterValidator(_workload_name)]
Labels = Annotated[dict[str, str], AfterValidator(_labels)]
Taints = Annotated[dict[str, str], AfterValidator(_taints)]
Image = Annotated[str, AfterValidator(_image)]
Env = Annotated[dict[str, str], AfterValidator(_env)]
Cron = Annotated[str, AfterValidator(_cron)]
TimeZone = Annotated[str, AfterValidator(_timezone)]
PortName = Annotated[str, _form(
    PORT_NAME, "is not a Kubernetes port name (≤ 15 lowercase letters, digits or '-', with at least one letter)",
    "use a name such as 'http' or 'metrics'", longest=15)]
SecretKey = Annotated[str, _form(
    SECRET_KEY, "is not a config key name (letters, digits, '_' or '-', a letter first)",
    f"name the key as set by 'pulumi config set --secret {SECRETS_NAMESPACE}:<key> <value>', e.g. 'hfToken'")]
AbsPath = Annotated[str, _form(r"(?s)/.*", "is not an absolute path", "start it with '/', e.g. '/models'")]
Quantity = Annotated[str, _form(r"[1-9]\d*(Mi|Gi|Ti)", "is not a size in whole Mi, Gi or Ti", "write it like '16Gi'")]
EnvName = Annotated[str, _form(ENV_NAME, "is not a valid environment variable name",
                               "use letters, digits, '_', '-' or '.', not starting with a digit")]
HttpPath = Annotated[str, _form(r"(?s)/.*", "is not an HTTP path", "start it with '/', e.g. '/health'")]
ShortDuration = Annotated[str, _form(r"\d+(s|m)", "is not a duration in whole seconds or minutes",
                                     "write it like '15s' or '1m'")]
SlackChannel = Annotated[str, _form(r"(?s)[#@].+", "is not a Slack channel or user", "write '#channel' or '@user'")]
RegistryHost = Annotated[str, _form(
    r"[a-z0-9.-]+(:\d+)?", "is not a registry host (lowercase, with an optional port)",
    "write the host as the image reference names it, e.g. 'registry.example.com' or 'registry.example.com:5000'")]
MetricName = Annotated[str, _form(PROMETHEUS_METRIC, "is not a Prometheus metric name",
                                  "use the series name as exported, e.g. 'vllm:num_requests_waiting'")]
HttpUrl = Annotated[str, AfterValidator(_http_url)]



class Model(BaseModel):
    """Frozen, camelCase in stack files, and strict about unknown keys."""

    # strict: a YAML value of the wrong kind is refused, never converted (`maxNodes: true` is not 1, `"4"` is not
    # 4, `enabled: "yes"` is not true); stackconfig/errors.py words each refusal.
    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, str_strip_whitespace=True,
        strict=True, allow_inf_nan=False,
    )

    @classmethod
    def keys(cls) -> list[str]:
        return [f.alias or name for name, f in cls.model_fields.items()]
