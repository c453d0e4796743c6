"""What the language host and the engine do around a program that Pulumi's mocks leave undone: hand over the
config, and run each resource's `transforms` (the mock monitor resolves their callbacks but does not run them:
pulumi/pulumi sdk/python/lib/pulumi/runtime/mocks.py `MockResourceArgs.transforms`), so that an option a transform
sets (the cluster's `deleted_with`) is recorded.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def language_host_config(config: dict[str, str], secret_keys: list[str]) -> Iterator[None]:
    """The config as `pulumi up` hands it over, for the duration of one run: pulumi-language-python (pulumi/pulumi
    v3.274.1 sdk/python/cmd/pulumi-language-python/main.go) puts it in PULUMI_CONFIG and the secret keys in
    PULUMI_CONFIG_SECRET_KEYS, and pulumi-language-python-exec passes both to `set_all_config`."""
    import pulumi

    saved = {var: os.environ.get(var) for var in ("PULUMI_CONFIG", "PULUMI_CONFIG_SECRET_KEYS")}
    os.environ["PULUMI_CONFIG"] = json.dumps(config)
    os.environ["PULUMI_CONFIG_SECRET_KEYS"] = json.dumps(secret_keys)
    try:
        pulumi.runtime.set_all_config(pulumi.runtime.get_config_env(), pulumi.runtime.get_config_secret_keys_env())
        yield
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


class Transforms:
    """The `transforms` each resource declared, and its parent: the engine runs a resource's own transforms, then
    each ancestor's, then the stack's."""

    def __init__(self) -> None:
        self.own: dict[str, list[Any]] = {}
        self.parents: dict[str, str] = {}

    def apply(self, request: Any) -> Any:
        chain = list(request.transforms)
        parent = request.parent
        while parent:
            chain += self.own.get(parent, [])
            parent = self.parents.get(parent, "")
        return transformed(request, chain) if chain else request

    def registered(self, urn: str, request: Any) -> None:
        self.own[urn] = list(request.transforms)
        self.parents[urn] = request.parent


def transformed(request: Any, callbacks: list[Any]) -> Any:
    """The registration after its transforms, run as the engine runs them (pulumi/pulumi v3.274.1
    pkg/resource/deploy/source_eval.go `RegisterResource`): each callback in turn, through the program's own callback
    server (the SDK's `_CallbackServicer`, which the engine calls over gRPC), on the program's event loop (this
    monitor method runs in an executor thread while the loop awaits it). The mock monitor does not run them."""
    import asyncio

    from pulumi.runtime._callbacks import _CallbackServicer
    from pulumi.runtime.proto import resource_pb2

    servers = {token: server for server in _CallbackServicer._servicers for token in server._callbacks}
    out = resource_pb2.RegisterResourceRequest()
    out.CopyFrom(request)
    for callback in callbacks:
        options = resource_pb2.TransformResourceOptions(
            depends_on=out.dependencies, protect=out.protect, ignore_changes=out.ignoreChanges,
            replace_on_changes=out.replaceOnChanges, version=out.version, aliases=out.aliases,
            provider=out.provider, custom_timeouts=out.customTimeouts, retain_on_delete=out.retainOnDelete,
            deleted_with=out.deletedWith, additional_secret_outputs=out.additionalSecretOutputs,
            providers=out.providers, plugin_download_url=out.pluginDownloadURL)
        if out.deleteBeforeReplaceDefined:
            options.delete_before_replace = out.deleteBeforeReplace
        call = resource_pb2.TransformRequest(type=out.type, name=out.name, custom=out.custom, parent=out.parent,
                                             properties=out.object, options=options)
        server = servers[callback.token]
        answer: Any = server._callbacks[callback.token](call.SerializeToString())  # a coroutine
        future = asyncio.run_coroutine_threadsafe(answer, server._loop)
        result = resource_pb2.TransformResponse.FromString(future.result().SerializeToString())
        out.object.CopyFrom(result.properties)
        o = result.options
        del out.dependencies[:]
        out.dependencies.extend(o.depends_on)
        out.protect = o.protect
        for name, values in (("ignoreChanges", o.ignore_changes), ("replaceOnChanges", o.replace_on_changes),
                             ("additionalSecretOutputs", o.additional_secret_outputs)):
            del getattr(out, name)[:]
            getattr(out, name).extend(values)
        out.retainOnDelete = o.retain_on_delete
        out.deletedWith = o.deleted_with
        out.provider = o.provider
        if o.HasField("delete_before_replace"):
            out.deleteBeforeReplace, out.deleteBeforeReplaceDefined = o.delete_before_replace, True
    return out


def _log_without_traceback(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    logging.getLogger("asyncio").error("%s: %r", context.get("message"), context.get("exception"))


def quiet_unretrieved_futures() -> None:
    """Log a future's unretrieved exception without its traceback, on the loop Pulumi's runtime runs programs on.

    A program refused inside an `apply` leaves futures holding the refusal that nobody awaits; asyncio logs each
    when the garbage collector finalizes it, at any later moment. Formatting its traceback parses source on CPython
    3.11 (traceback.py's caret anchors); when that finalizer runs in the middle of another `ast.parse`, the outer
    parse fails with "AST constructor recursion depth mismatch" (python/cpython gh-106905: one counter per
    interpreter), and an unrelated test with it.
    """
    try:
        loop = asyncio.get_event_loop()  # as pulumi's runtime/sync_await.py gets it
    except RuntimeError:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    loop.set_exception_handler(_log_without_traceback)
