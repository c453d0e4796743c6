// A workload team's stack in TypeScript: one GPU workload on the platform, through the platform's component package.
//
// Added once with `pulumi package add <platform checkout>/gpu_platform` (or its git URL), which generates the
// `@pulumi/gpu-platform` SDK into sdks/ and adds it to package.json. The platform is read only through its stack's
// outputs, passed to the component as Inputs; the component checks the workload with the platform's own rules, and
// refuses a name the platform's own workloads have in the same namespace (`platformWorkloads`).
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import * as gpu from "@pulumi/gpu-platform";

interface Workload {
    name: string;
    image: string;
    maxReplicas: number;
    namespace?: string;
    command?: string[];
    args?: string[];
    minReplicas?: number;
    targetUtilization?: number;
    priorityClassName?: string;
}

const config = new pulumi.Config();
const platform = new pulumi.StackReference(config.require("platformStack"));
const team = config.require("team"); // the team's entry in the platform's `teams`: its namespace, its GPU quota
const workload = config.requireObject<Workload>("workload");
const gpuPool = platform.requireOutput("gpuPool");

// The team's own credential (its namespace only), not the cluster's admin kubeconfig; secret, and marked again so it
// stays secret here even if the platform stopped marking it.
const cluster = new k8s.Provider("platform-cluster", {
    kubeconfig: pulumi.secret(platform.requireOutput("teamKubeconfigs").apply(k => {
        // Never undefined: the provider would fall back to this machine's own kubeconfig.
        if (!(team in k)) { throw new Error(`no team ${team} in the platform's teams`); }
        return k[team] as string;
    })),
    enableServerSideApply: true,
});
const app = new gpu.GpuWorkload(workload.name, {
    pool: {
        name: gpuPool.apply(p => p.name),
        labels: gpuPool.apply(p => p.labels),
        taints: gpuPool.apply(p => p.taints),
        gpusPerNode: gpuPool.apply(p => p.gpusPerNode),
        maxNodes: gpuPool.apply(p => p.maxNodes),
    },
    prometheusUrl: platform.requireOutput("prometheusUrl"),
    platformWorkloads: platform.requireOutput("workloads"),
    name: workload.name,
    image: workload.image,
    namespace: workload.namespace ?? team, // the team's own unless the team was given another
    command: workload.command,
    args: workload.args,
    minReplicas: workload.minReplicas,
    maxReplicas: workload.maxReplicas,
    targetUtilization: workload.targetUtilization,
    priorityClassName: workload.priorityClassName,
}, { providers: { kubernetes: cluster } });

export const deployment = app.deploymentName;
export const scaledObject = app.scaledObjectName;
export const namespace = app.namespace;
