"""Run `__main__.py` for a stack under Pulumi's mocks and record every registration the engine would get.

The recording monitor keeps the raw RegisterResourceRequest of each resource (parent, provider,
dependencies, property dependencies, options and inputs with secrets marked), because the mocks' own
`MockResourceArgs` omit most of it (pulumi/pulumi#14421; pulumi/pulumi sdk/python/lib/pulumi/runtime/mocks.py).
Stack config is read from `Pulumi.<stack>.yaml` the way the CLI would pass it to the program.
"""

from __future__ import annotations

import base64
import json
import runpy
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from offline.runtime import Transforms, language_host_config, quiet_unretrieved_futures

ROOT = Path(__file__).resolve().parent.parent
#: The generated Gcore SDK (`pulumi install`, or `python -m realengine.gcore_sdk`), which requirements*.txt install.
GCORE_SDK = ROOT / "sdks" / "gcore"
#: The Secret type whose data Kubernetes fills in (a ServiceAccount's long-lived token).
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
#: Pulumi's marker for a secret value on the wire (sdk/go/common/resource/sig).
SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
MOCK_KUBECONFIG = (
    "apiVersion: v1\nkind: Config\nclusters:\n- name: mock\n  cluster: {server: 'https://127.0.0.1:6443'}\n"
    "users:\n- name: mock\n  user: {token: mock-token}\n"
    "contexts:\n- name: mock\n  context: {cluster: mock, user: mock}\n"
    "current-context: mock\n"
)


def ensure_gcore_sdk() -> None:
    """The generated `pulumi_gcore` must be installed: it reads its own version from its package metadata."""
    try:
        import pulumi_gcore  # noqa: F401
    except ImportError:
        raise SystemExit(f"pulumi_gcore is not installed in {sys.prefix}: run `pip install -r requirements-dev.txt` "
                         f"(it installs {GCORE_SDK.relative_to(ROOT)}) or `pulumi install`") from None


@dataclass(frozen=True)
class Secret:
    """An input value the engine would receive marked secret."""

    value: Any


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(SECRET_SIG_KEY) == SECRET_SIG:
            return Secret(_plain(value.get("value")))
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@dataclass(frozen=True)
class RecordedResource:
    type: str
    name: str
    urn: str
    custom: bool
    parent: str
    provider: str
    dependencies: tuple[str, ...]
    property_dependencies: Mapping[str, tuple[str, ...]]
    inputs: Mapping[str, Any]
    options: Mapping[str, Any]

    @property
    def provider_name(self) -> str:
        """Name of the explicit provider resource (`<provider urn>::<id>`), '' for the default one."""
        return self.provider.split("::")[-2] if self.provider else ""

    def depends_on(self, other: RecordedResource) -> bool:
        return other.urn in self.dependencies


@dataclass(frozen=True)
class RecordedInvoke:
    token: str
    args: Mapping[str, Any]


@dataclass
class Recording:
    stack: str
    resources: list[RecordedResource] = field(default_factory=list)
    invokes: list[RecordedInvoke] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: set[str] = field(default_factory=set)
    #: URNs of components that called `register_outputs` (Pulumi shows a component as "creating" until then).
    registered_outputs: set[str] = field(default_factory=set)

    def get(self, name: str, type_: str | None = None) -> RecordedResource:
        hits = [r for r in self.resources if r.name == name and type_ in (None, r.type)]
        if len(hits) != 1:
            raise KeyError(f"{name} ({type_ or 'any type'}): {len(hits)} registrations")
        return hits[0]

    def by_urn(self, urn: str) -> RecordedResource:
        return next(r for r in self.resources if r.urn == urn)

    def of_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_]

    def effective_dependencies(self, res: RecordedResource) -> set[str]:
        """What the engine waits for before `res`: its own dependencies and those of its components."""
        deps = set(res.dependencies)
        for ancestor in self.ancestors(res):
            deps |= set(ancestor.dependencies)
        return deps

    def ancestors(self, res: RecordedResource) -> list[RecordedResource]:
        out, urns = [], {r.urn: r for r in self.resources}
        while res.parent in urns:
            res = urns[res.parent]
            out.append(res)
        return out


@dataclass(frozen=True)
class ReferencedStack:
    """What a mocked `pulumi.StackReference` to another stack returns: its outputs and which are secret.

    `ReferencedStack.of(record_stack("dev"))` hands a consumer the outputs this program really exports, so a
    consumer's test breaks when the output contract does.
    """

    outputs: Mapping[str, Any]
    secret_outputs: frozenset[str] = frozenset()

    @classmethod
    def of(cls, recording: Recording) -> ReferencedStack:
        return cls(dict(recording.outputs), frozenset(recording.secret_outputs))


def _struct(message: Any) -> dict[str, Any]:
    from google.protobuf import json_format

    return json_format.MessageToDict(message, preserving_proto_field_name=True) if message is not None else {}


#: What a provider answers for a value it will only know after the update (pulumi/pulumi sdk/go/common/resource/
#: plugin/rpc.go UnknownStringValue); the SDK turns it into an unknown Output during a preview.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
#: What the Gcore provider computes for a new cluster: unknown until it exists.
CLUSTER_COMPUTED = ("k8sv2Id", "status", "isPublic", "createdAt", "creatorTaskId", "taskId", "securityGroupId",
                    "podsIpPool", "servicesIpPool")


def _mocks_and_monitor(recording: Recording, stack_references: Mapping[str, ReferencedStack] | None = None,
                       preview: bool = False) -> Any:
    import pulumi
    from pulumi.runtime.mocks import MockMonitor

    references = dict(stack_references or {})
    names = _repository_module("stacknames")

    class GraphMocks(pulumi.runtime.Mocks):
        """Echo inputs and fill in what a real provider would compute."""

        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
            state = dict(args.inputs)
            if args.typ == "pulumi:pulumi:StackReference":
                # Read by id = the referenced stack's name (pulumi/pulumi sdk/python/lib/pulumi/stack_reference.py).
                stack_name = args.resource_id or args.name
                if stack_name not in references:
                    raise KeyError(f"no outputs given for the stack reference {stack_name!r}")
                ref = references[stack_name]
                return stack_name, {
                    "name": stack_name,
                    "outputs": dict(ref.outputs),
                    "secretOutputNames": sorted(ref.secret_outputs),
                }
            if preview and args.typ != "pulumi:index:Stash":
                # A preview of a new stack: ids and computed values are unknown (the engine's preview of a create);
                # the inputs come back as the provider plans them.
                computed = CLUSTER_COMPUTED if args.typ == names.CLUSTER_TYPE else ()
                return None, {**state, **dict.fromkeys(computed, UNKNOWN)}  # type: ignore[return-value]
            if args.typ == names.CLUSTER_TYPE:
                return state.get("name", args.name), {**state, "status": "Provisioned", "isPublic": False}
            if args.typ == names.RELEASE_TYPE:
                status = {"name": state.get("name", args.name), "namespace": state.get("namespace"),
                          "status": "deployed"}
                return f"{state.get('namespace')}/{state.get('name')}", {**state, "status": status}
            if args.typ == "kubernetes:core/v1:Secret" and state.get("type") == SERVICE_ACCOUNT_TOKEN:
                # Kubernetes' token controller fills a token Secret in for its ServiceAccount.
                token = base64.b64encode(f"token-of-{args.name}".encode()).decode()
                return f"{args.name}-id", {**state, "data": {"token": token}}
            if args.typ == "pulumi:index:Stash":
                # The engine's built-in: `output` is the first `input` it stored (pkg/resource/deploy/builtins.go).
                return f"{args.name}-id", {**state, "output": state.get("input")}
            return f"{args.name}-id", state

        def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
            """The invoke's result and its check failures (none)."""
            recording.invokes.append(RecordedInvoke(args.token, _plain(dict(args.args))))
            if args.token == "gcore:index/getK8sv2Kubeconfig:getK8sv2Kubeconfig":
                return {**args.args, "id": args.args.get("clusterName"), "kubeconfig": MOCK_KUBECONFIG,
                        "host": "https://127.0.0.1:6443"}, []
            return {}, []

    class RecordingMonitor(MockMonitor):
        transforms = Transforms()

        def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
            request = self.transforms.apply(request)
            response = super().RegisterResource(request)
            self.transforms.registered(response.urn, request)
            if request.type != "pulumi:pulumi:Stack":
                ct = request.customTimeouts
                recording.resources.append(
                    RecordedResource(
                        type=request.type,
                        name=request.name,
                        urn=response.urn,
                        custom=request.custom,
                        parent=request.parent,
                        provider=request.provider,
                        dependencies=tuple(request.dependencies),
                        property_dependencies={
                            k: tuple(v.urns) for k, v in request.propertyDependencies.items()
                        },
                        inputs=_plain(_struct(request.object)),
                        options={
                            "protect": request.protect,
                            "deleteBeforeReplace": request.deleteBeforeReplace,
                            "ignoreChanges": list(request.ignoreChanges),
                            "replaceOnChanges": list(request.replaceOnChanges),
                            "retainOnDelete": request.retainOnDelete,
                            "additionalSecretOutputs": list(request.additionalSecretOutputs),
                            "customTimeouts": {"create": ct.create, "update": ct.update, "delete": ct.delete},
                            "packageRef": request.packageRef,
                            "providers": dict(request.providers),
                            # Former URNs (spec: name, type, parentUrn... or a urn): what a rename keeps.
                            "aliases": [_struct(a) for a in request.aliases],
                            "deletedWith": request.deletedWith,
                        },
                    )
                )
            return response

        def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
            recording.registered_outputs.add(request.urn)
            return super().RegisterResourceOutputs(request)

    mocks = GraphMocks()
    return mocks, RecordingMonitor(mocks)


def load_config(stack: str, project_dir: Path = ROOT) -> tuple[str, dict[str, str], list[str]]:
    """Project name, config as the CLI passes it (`<ns>:<key>` -> string/JSON), and the secret keys.

    Read strictly by the repository's one stack-file reader (stackconfig/stackfile.py): a duplicate key, a tab or a
    syntax error is refused with file:line:column, not guessed; a `secure:` value becomes its placeholder.
    """
    source = _repository_module("stackconfig.stackfile").read_stack(project_dir, stack)
    return source.project, source.engine_config(), source.secret_keys()


def _repository_module(name: str) -> Any:
    """A module of this repository, also when this engine evaluates another project and the repository root is not
    on sys.path: the root is on it only while the module is imported, not while that project's program runs."""
    import importlib

    added = str(ROOT) not in sys.path
    if added:
        sys.path.append(str(ROOT))
    try:
        return importlib.import_module(name)
    finally:
        if added:
            sys.path.remove(str(ROOT))


def _stack_config(stack: str, overrides: Mapping[str, Any] | None = None) -> Any:
    """The stack's config model with `overrides` applied, or None when it does not load (the program reports it)."""
    from stackconfig import ConfigError, load_stack_config
    from stackconfig.loader import decode

    project, config, _ = load_config(stack)
    for key, value in (overrides or {}).items():
        full = key if ":" in key else f"{project}:{key}"
        config.pop(full, None)
        if value is not None:
            config[full] = value if isinstance(value, str) else json.dumps(value)
    prefix = f"{project}:"
    raw = {k.removeprefix(prefix): decode(v) for k, v in config.items() if k.startswith(prefix)}
    try:
        return load_stack_config(raw)
    except ConfigError:
        return None


def placeholder_secrets(stack: str, overrides: Mapping[str, Any] | None = None) -> dict[str, str]:
    """`secrets:<key>` -> placeholder for every secret key this project's stack config refers to and the stack file
    does not set (the offline plan names them: `pulumi up` refuses to run without them).

    What an operator's `pulumi config set --secret` provides on a real machine; the offline plan and the
    graph tests have no such values. A key the file sets keeps its own value: a `secure:` one is already a
    placeholder, a plain-text one stays plain, so the program refuses it as `pulumi up` would. A config that does
    not load gets none (the program reports it).
    """
    from stackconfig import secret_config_keys
    from stackconfig.stackfile import SECRET_PLACEHOLDER
    from stacknames import SECRETS_NAMESPACE

    cfg = _stack_config(stack, overrides)
    keys = secret_config_keys(cfg) if cfg is not None else []
    _, config, _ = load_config(stack)
    return {full: SECRET_PLACEHOLDER for k in keys if (full := f"{SECRETS_NAMESPACE}:{k}") not in config}


def placeholder_references(stack: str, overrides: Mapping[str, Any] | None = None) -> dict[str, ReferencedStack]:
    """The stack an existing cluster's kubeconfig comes from (`cluster.existing.stackReference`), exporting a
    (secret) kubeconfig as the owning stack would: what the offline plan assumes of a stack it cannot read."""
    cfg = _stack_config(stack, overrides)
    ref = cfg.cluster.existing.stack_reference if cfg is not None and cfg.cluster.existing else None
    return {ref: ReferencedStack({"kubeconfig": MOCK_KUBECONFIG}, frozenset({"kubeconfig"}))} if ref else {}


def record_stack(
    stack: str,
    overrides: Mapping[str, Any] | None = None,
    project_dir: Path = ROOT,
    into: Recording | None = None,
    secrets: Mapping[str, str] | None = None,
    stack_references: Mapping[str, ReferencedStack] | None = None,
    preview: bool = False,
) -> Recording:
    """Evaluate `__main__.py` for `stack`; `overrides` replace whole project keys (None deletes one).
    `preview` evaluates it as `pulumi preview` of a new stack does: ids and computed outputs unknown.

    `into` receives the registrations even when the program raises (to prove nothing was half-created).
    `secrets` is secret config (`{"secrets:hfToken": "..."}`, as `pulumi config set --secret` would give);
    None gives every secret key the stack refers to a placeholder (`placeholder_secrets`). `stack_references`
    None gives the stack an existing cluster comes from a placeholder (`placeholder_references`).
    """
    if secrets is None:
        secrets = placeholder_secrets(stack, overrides) if project_dir == ROOT else {}
    if stack_references is None:
        stack_references = placeholder_references(stack, overrides) if project_dir == ROOT else {}
    return record_program(project_dir, stack, overrides, into=into, secrets=secrets,
                          stack_references=stack_references, preview=preview)


def record_program(
    project_dir: Path,
    stack: str,
    overrides: Mapping[str, Any] | None = None,
    *,
    stack_references: Mapping[str, ReferencedStack] | None = None,
    into: Recording | None = None,
    secrets: Mapping[str, str] | None = None,
    plain: Mapping[str, str] | None = None,
    preview: bool = False,
) -> Recording:
    """Evaluate the Pulumi project in `project_dir` (its `Pulumi.yaml`, `Pulumi.<stack>.yaml`, `__main__.py`).

    `secrets` and `plain` are full config keys (`namespace:key`) given as secret or plain values.
    `stack_references` maps a stack name as the program passes it to `pulumi.StackReference` to the outputs the
    reference returns; a reference to any other stack fails, as it would against a backend without it.
    """
    import pulumi
    from pulumi.runtime.settings import get_root_resource

    ensure_gcore_sdk()
    if str(project_dir) not in sys.path:
        sys.path.insert(0, str(project_dir))
    project, config, secret_keys = load_config(stack, project_dir)
    for key, value in (overrides or {}).items():
        full = key if ":" in key else f"{project}:{key}"
        if value is None:
            config.pop(full, None)
        else:
            config[full] = value if isinstance(value, str) else json.dumps(value)
    # Secret config as the CLI passes a `--secret` value (listed in the secret keys), and `plain` config in
    # other namespaces as a value set without `--secret` would arrive.
    for full, value in (secrets or {}).items():
        config[full] = value
        secret_keys.append(full)
    config.update(plain or {})

    recording = into if into is not None else Recording(stack)
    mocks, monitor = _mocks_and_monitor(recording, stack_references, preview)
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=preview, monitor=monitor)
    root = get_root_resource()
    assert isinstance(root, pulumi.runtime.stack.Stack), root
    root.outputs.clear()  # the Stack resource is reused across runs in one process

    @pulumi.runtime.test
    async def run() -> None:
        runpy.run_path(str(project_dir / "__main__.py"), run_name="__main__")

    quiet_unretrieved_futures()
    with language_host_config(config, secret_keys):
        run()

    @pulumi.runtime.test
    async def collect() -> None:
        for name, value in root.outputs.items():
            out = pulumi.Output.from_input(value)
            recording.outputs[name] = _plain(await out.future())
            if await out.is_secret():
                recording.secret_outputs.add(name)

    collect()
    return recording
