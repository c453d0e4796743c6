"""Test double of `pulumi_gcore`, the Pulumi SDK that `pulumi install` generates into `sdks/gcore`.

The SDK comes from the `packages:` entry of Pulumi.yaml (`source: terraform-provider`, parameters
`g-core/gcore 0.34.3`): the Gcore Terraform provider v0.34.3 bridged by Pulumi's "any Terraform provider"
dynamic bridge. This double keeps only what the project uses - `K8sv2` (with its full argument list and
nested input/output types), `get_k8sv2_kubeconfig[_output]` and `Provider` - and mirrors the generated SDK's
module layout, class/function names, arguments and type tokens (`gcore:index/k8sv2:K8sv2`,
`gcore:index/getK8sv2Kubeconfig:getK8sv2Kubeconfig`, `pulumi:providers:gcore`).

Like the generated SDK it is a parameterized package: every resource and invoke passes
`package_ref=_utilities.get_package()`, which registers the package (`RegisterPackage` with base provider
`terraform-provider` and parameterization `gcore` 0.34.3) with the resource monitor. It registers resources
with the (mock) monitor but talks to no provider. Tests put `testdoubles/` on sys.path only when the real
`pulumi_gcore` is not importable.
"""

from . import _utilities, outputs
from ._inputs import (
    K8sv2AuthenticationArgs,
    K8sv2AuthenticationArgsDict,
    K8sv2AuthenticationOidcArgs,
    K8sv2AuthenticationOidcArgsDict,
    K8sv2CniArgs,
    K8sv2CniArgsDict,
    K8sv2CniCiliumArgs,
    K8sv2CniCiliumArgsDict,
    K8sv2CsiArgs,
    K8sv2CsiArgsDict,
    K8sv2CsiNfsArgs,
    K8sv2CsiNfsArgsDict,
    K8sv2DdosProfileArgs,
    K8sv2DdosProfileArgsDict,
    K8sv2DdosProfileFieldArgs,
    K8sv2DdosProfileFieldArgsDict,
    K8sv2PoolArgs,
    K8sv2PoolArgsDict,
    K8sv2SecurityGroupRuleArgs,
    K8sv2SecurityGroupRuleArgsDict,
    K8sv2TimeoutsArgs,
    K8sv2TimeoutsArgsDict,
)
from .get_k8sv2_kubeconfig import (
    AwaitableGetK8sv2KubeconfigResult,
    GetK8sv2KubeconfigResult,
    get_k8sv2_kubeconfig,
    get_k8sv2_kubeconfig_output,
)
from .k8sv2 import K8sv2, K8sv2Args
from .provider import Provider, ProviderArgs

__all__ = [
    "AwaitableGetK8sv2KubeconfigResult",
    "GetK8sv2KubeconfigResult",
    "K8sv2",
    "K8sv2Args",
    "K8sv2AuthenticationArgs",
    "K8sv2AuthenticationArgsDict",
    "K8sv2AuthenticationOidcArgs",
    "K8sv2AuthenticationOidcArgsDict",
    "K8sv2CniArgs",
    "K8sv2CniArgsDict",
    "K8sv2CniCiliumArgs",
    "K8sv2CniCiliumArgsDict",
    "K8sv2CsiArgs",
    "K8sv2CsiArgsDict",
    "K8sv2CsiNfsArgs",
    "K8sv2CsiNfsArgsDict",
    "K8sv2DdosProfileArgs",
    "K8sv2DdosProfileArgsDict",
    "K8sv2DdosProfileFieldArgs",
    "K8sv2DdosProfileFieldArgsDict",
    "K8sv2PoolArgs",
    "K8sv2PoolArgsDict",
    "K8sv2SecurityGroupRuleArgs",
    "K8sv2SecurityGroupRuleArgsDict",
    "K8sv2TimeoutsArgs",
    "K8sv2TimeoutsArgsDict",
    "Provider",
    "ProviderArgs",
    "get_k8sv2_kubeconfig",
    "get_k8sv2_kubeconfig_output",
    "outputs",
]

# As generated: lets the runtime rehydrate resource references of this package (e.g. from a component's outputs).
_utilities.register(
    resource_modules="""
[
 {
  "pkg": "gcore",
  "mod": "index/k8sv2",
  "fqn": "pulumi_gcore",
  "classes": {
   "gcore:index/k8sv2:K8sv2": "K8sv2"
  }
 }
]
""",
    resource_packages="""
[
 {
  "pkg": "gcore",
  "token": "pulumi:providers:gcore",
  "fqn": "pulumi_gcore",
  "class": "Provider"
 }
]
""",
)
