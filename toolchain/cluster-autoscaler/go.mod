// Wrapper module: builds Kubernetes Cluster Autoscaler 1.35.2 (kubernetes/autoscaler, folder cluster-autoscaler/,
// tag cluster-autoscaler-1.35.2) with its kwok cloud provider (pins.toml [cluster-autoscaler]: `-tags kwok`).
// Neither k8s.io/autoscaler/cluster-autoscaler nor its apis module (cluster-autoscaler/apis) has a module tag:
// pins.toml names their mirror folders and the commit. The placeholder version below is what `go mod tidy -e`
// records for a module replaced by a folder (-e: the mirror holds only the kwok build's packages); without a
// mirror, toolchain/build.py's `go get <module>@<commit>` sets both to that commit's pseudo-versions.
// The replaces below repeat cluster-autoscaler-1.35.2's go.mod (all but `apis => ./apis`), as does its godebug line.
module gpu-autoscaling.local/toolchain/cluster-autoscaler

go 1.26.0

godebug default=go1.25

require k8s.io/autoscaler/cluster-autoscaler v0.0.0-00010101000000-000000000000

require (
	cel.dev/expr v0.24.0 // indirect
	github.com/Masterminds/semver/v3 v3.4.0 // indirect
	github.com/Microsoft/go-winio v0.6.2 // indirect
	github.com/NYTimes/gziphandler v1.1.1 // indirect
	github.com/antlr4-go/antlr/v4 v4.13.1 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/blang/semver/v4 v4.0.0 // indirect
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/distribution/reference v0.6.0 // indirect
	github.com/emicklei/go-restful/v3 v3.13.0 // indirect
	github.com/felixge/httpsnoop v1.0.4 // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/fxamacker/cbor/v2 v2.9.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-logr/zapr v1.3.0 // indirect
	github.com/go-openapi/jsonpointer v0.21.2 // indirect
	github.com/go-openapi/jsonreference v0.21.0 // indirect
	github.com/go-openapi/swag v0.23.1 // indirect
	github.com/go-task/slim-sprig/v3 v3.0.0 // indirect
	github.com/google/cel-go v0.26.1 // indirect
	github.com/google/gnostic-models v0.7.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/pprof v0.0.0-20250820193118-f64d9cf942d6 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.27.2 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/mailru/easyjson v0.9.0 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/onsi/ginkgo/v2 v2.27.5 // indirect
	github.com/onsi/gomega v1.39.0 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.66.1 // indirect
	github.com/prometheus/procfs v0.17.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/spf13/cobra v1.10.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/stoewer/go-strcase v1.3.1 // indirect
	github.com/stretchr/objx v0.5.2 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc v0.62.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.62.0 // indirect
	go.opentelemetry.io/otel v1.41.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.37.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.37.0 // indirect
	go.opentelemetry.io/otel/metric v1.41.0 // indirect
	go.opentelemetry.io/otel/sdk v1.37.0 // indirect
	go.opentelemetry.io/otel/trace v1.41.0 // indirect
	go.opentelemetry.io/proto/otlp v1.7.1 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.0 // indirect
	go.yaml.in/yaml/v2 v2.4.3 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/exp v0.0.0-20250819193227-8b4c13bb791b // indirect
	golang.org/x/mod v0.31.0 // indirect
	golang.org/x/net v0.49.0 // indirect
	golang.org/x/oauth2 v0.30.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.40.0 // indirect
	golang.org/x/term v0.39.0 // indirect
	golang.org/x/text v0.33.0 // indirect
	golang.org/x/time v0.14.0 // indirect
	golang.org/x/tools v0.40.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20250826171959-ef028d996bc1 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250826171959-ef028d996bc1 // indirect
	google.golang.org/grpc v1.75.0 // indirect
	google.golang.org/protobuf v1.36.8 // indirect
	gopkg.in/evanphx/json-patch.v4 v4.13.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	k8s.io/api v0.35.6 // indirect
	k8s.io/apiextensions-apiserver v0.35.6 // indirect
	k8s.io/apimachinery v0.35.6 // indirect
	k8s.io/apiserver v0.35.6 // indirect
	k8s.io/autoscaler/cluster-autoscaler/apis v0.0.0-20240627115740-d52e4b9665d7 // indirect
	k8s.io/client-go v0.35.6 // indirect
	k8s.io/cloud-provider v0.35.1 // indirect
	k8s.io/code-generator v0.35.6 // indirect
	k8s.io/component-base v0.35.6 // indirect
	k8s.io/component-helpers v0.35.6 // indirect
	k8s.io/controller-manager v0.35.6 // indirect
	k8s.io/cri-api v0.35.6 // indirect
	k8s.io/cri-client v0.0.0 // indirect
	k8s.io/csi-translation-lib v0.27.0 // indirect
	k8s.io/dynamic-resource-allocation v0.35.6 // indirect
	k8s.io/gengo/v2 v2.0.0-20250922181213-ec3ebc5fd46b // indirect
	k8s.io/klog/v2 v2.130.1 // indirect
	k8s.io/kube-openapi v0.0.0-20250910181357-589584f1c912 // indirect
	k8s.io/kube-scheduler v0.0.0 // indirect
	k8s.io/kubelet v0.35.6 // indirect
	k8s.io/kubernetes v1.35.6 // indirect
	k8s.io/utils v0.0.0-20251002143259-bc988d571ff4 // indirect
	sigs.k8s.io/json v0.0.0-20250730193827-2d320260d730 // indirect
	sigs.k8s.io/randfill v1.0.0 // indirect
	sigs.k8s.io/structured-merge-diff/v6 v6.3.2-0.20260122202528-d9cc6641c482 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)

replace github.com/aws/aws-sdk-go/service/eks => github.com/aws/aws-sdk-go/service/eks v1.38.49

replace github.com/rancher/go-rancher => github.com/rancher/go-rancher v0.1.0

replace k8s.io/api => k8s.io/api v0.35.6

replace k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.35.6

replace k8s.io/apimachinery => k8s.io/apimachinery v0.35.6

replace k8s.io/apiserver => k8s.io/apiserver v0.35.6

replace k8s.io/cli-runtime => k8s.io/cli-runtime v0.35.6

replace k8s.io/client-go => k8s.io/client-go v0.35.6

replace k8s.io/cloud-provider => k8s.io/cloud-provider v0.35.6

replace k8s.io/cluster-bootstrap => k8s.io/cluster-bootstrap v0.35.6

replace k8s.io/code-generator => k8s.io/code-generator v0.35.6

replace k8s.io/component-base => k8s.io/component-base v0.35.6

replace k8s.io/component-helpers => k8s.io/component-helpers v0.35.6

replace k8s.io/controller-manager => k8s.io/controller-manager v0.35.6

replace k8s.io/cri-api => k8s.io/cri-api v0.35.6

replace k8s.io/csi-translation-lib => k8s.io/csi-translation-lib v0.35.6

replace k8s.io/kube-aggregator => k8s.io/kube-aggregator v0.35.6

replace k8s.io/kube-controller-manager => k8s.io/kube-controller-manager v0.35.6

replace k8s.io/kube-proxy => k8s.io/kube-proxy v0.35.6

replace k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.35.6

replace k8s.io/kubectl => k8s.io/kubectl v0.35.6

replace k8s.io/kubelet => k8s.io/kubelet v0.35.6

replace k8s.io/metrics => k8s.io/metrics v0.35.6

replace k8s.io/mount-utils => k8s.io/mount-utils v0.35.6

replace k8s.io/sample-apiserver => k8s.io/sample-apiserver v0.35.6

replace k8s.io/sample-cli-plugin => k8s.io/sample-cli-plugin v0.35.6

replace k8s.io/sample-controller => k8s.io/sample-controller v0.35.6

replace k8s.io/pod-security-admission => k8s.io/pod-security-admission v0.35.6

replace k8s.io/dynamic-resource-allocation => k8s.io/dynamic-resource-allocation v0.35.6

replace k8s.io/kms => k8s.io/kms v0.35.6

replace k8s.io/endpointslice => k8s.io/endpointslice v0.35.6

replace k8s.io/cri-client => k8s.io/cri-client v0.35.6

replace k8s.io/externaljwt => k8s.io/externaljwt v0.35.6
