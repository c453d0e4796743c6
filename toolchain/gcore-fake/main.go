// Command terraform-provider-gcore (fake) serves the pinned Gcore provider's schemas, as schemagen read them from
// its source, through terraform-plugin-sdk/v2, with an in-memory (or on-disk) Gcore API behind them.
//
// What is real: every attribute's type, required/optional/computed, ForceNew, Sensitive, default, nesting and
// MaxItems (schema.json, generated at build time from G-Core/terraform-provider-gcore at the pinned tag), and
// terraform-plugin-sdk/v2's own plan, diff and replacement logic at the version the real provider uses. What is
// not: the Gcore API (CRUD below keeps clusters in GCORE_FAKE_API_DIR, or trusts the state when it is unset),
// validators, diff suppressors and CustomizeDiff (code, not data; schema.json lists them under "omitted").
//
// Environment: GCORE_FAKE_API_DIR (where clusters are kept between runs; unset: Read returns the state as is),
// GCORE_FAKE_KUBECONFIG (a kubeconfig file the kubeconfig data source returns; unset: a kubeconfig for an
// unresolvable host, so nothing can reach a network), GCORE_FAKE_ON_DELETE (a command run when a cluster is
// deleted, with GCORE_FAKE_CLUSTER set: deleting a Gcore cluster deletes everything in it, so the end-to-end
// tests stop the local control plane that stands for it).
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"time"

	"github.com/hashicorp/terraform-plugin-sdk/v2/diag"
	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/schema"
	"github.com/hashicorp/terraform-plugin-sdk/v2/plugin"
)

//go:embed schema.json
var schemaJSON []byte

// Defaults whose value is an expression of a module the proxy refuses (github.com/G-Core/gcorelabscloud-go);
// each value is the one the attribute's own description states.
var unresolvedDefaults = map[string]any{
	// cni.provider: "Supported values are: calico, cilium. The default value is calico."
	"clusters.CalicoProvider.String()": "calico",
}

type attrSpec map[string]any

func toSchemaMap(m map[string]any) (map[string]*schema.Schema, error) {
	out := map[string]*schema.Schema{}
	for k, v := range m {
		s, err := toSchema(attrSpec(v.(map[string]any)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
}

var valueTypes = map[string]schema.ValueType{
	"TypeBool": schema.TypeBool, "TypeInt": schema.TypeInt, "TypeFloat": schema.TypeFloat,
	"TypeString": schema.TypeString, "TypeList": schema.TypeList, "TypeMap": schema.TypeMap,
	"TypeSet": schema.TypeSet,
}

func strings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

func typed(t schema.ValueType, v any) any {
	if f, ok := v.(float64); ok && t == schema.TypeInt {
		return int(f)
	}
	return v
}

func toSchema(a attrSpec) (*schema.Schema, error) {
	t, ok := valueTypes[fmt.Sprint(a["type"])]
	if !ok {
		return nil, fmt.Errorf("unknown type %v", a["type"])
	}
	s := &schema.Schema{Type: t}
	b := func(k string) bool { v, _ := a[k].(bool); return v }
	s.Optional, s.Required, s.Computed, s.ForceNew, s.Sensitive = b("optional"), b("required"), b("computed"),
		b("force_new"), b("sensitive")
	if v, ok := a["description"].(string); ok {
		s.Description = v
	}
	if v, ok := a["deprecated"].(string); ok {
		s.Deprecated = v
	}
	if v, ok := a["max_items"].(float64); ok {
		s.MaxItems = int(v)
	}
	if v, ok := a["min_items"].(float64); ok {
		s.MinItems = int(v)
	}
	if v, ok := a["default"]; ok {
		s.Default = typed(t, v)
	}
	if src, ok := a["default_unresolved"].(string); ok {
		v, known := unresolvedDefaults[src]
		if !known {
			return nil, fmt.Errorf("default %s cannot be evaluated and has no stated value", src)
		}
		s.Default = v
	}
	if df, ok := a["default_func"].(map[string]any); ok {
		s.DefaultFunc = schema.EnvDefaultFunc(df["env"].(string), typed(t, df["default"]))
	}
	for key, dst := range map[string]*[]string{"exactly_one_of": &s.ExactlyOneOf, "conflicts_with": &s.ConflictsWith,
		"at_least_one_of": &s.AtLeastOneOf, "required_with": &s.RequiredWith} {
		if v, ok := a[key]; ok {
			*dst = strings(v)
		}
	}
	if e, ok := a["elem"].(map[string]any); ok {
		if es, ok := e["schema"].(map[string]any); ok {
			inner, err := toSchema(attrSpec(es))
			if err != nil {
				return nil, err
			}
			s.Elem = inner
		} else if er, ok := e["resource"].(map[string]any); ok {
			sm, err := toSchemaMap(er["schema"].(map[string]any))
			if err != nil {
				return nil, err
			}
			s.Elem = &schema.Resource{Schema: sm}
		}
	}
	return s, nil
}

type spec struct {
	Provider    map[string]any            `json:"provider"`
	Resources   map[string]map[string]any `json:"resources"`
	DataSources map[string]map[string]any `json:"data_sources"`
}

func timeouts(r map[string]any) *schema.ResourceTimeout {
	t, ok := r["timeouts_seconds"].(map[string]any)
	if !ok {
		return nil
	}
	d := func(k string) *time.Duration {
		v, ok := t[k].(float64)
		if !ok {
			return nil
		}
		x := time.Duration(v) * time.Second
		return &x
	}
	return &schema.ResourceTimeout{Create: d("create"), Read: d("read"), Update: d("update"), Delete: d("delete"),
		Default: d("default")}
}

func provider() *schema.Provider {
	var sp spec
	if err := json.Unmarshal(schemaJSON, &sp); err != nil {
		panic(err)
	}
	must := func(m map[string]*schema.Schema, err error) map[string]*schema.Schema {
		if err != nil {
			panic(err)
		}
		return m
	}
	k8s := sp.Resources["gcore_k8sv2"]
	kc := sp.DataSources["gcore_k8sv2_kubeconfig"]
	return &schema.Provider{
		Schema: must(toSchemaMap(sp.Provider["schema"].(map[string]any))),
		ResourcesMap: map[string]*schema.Resource{
			"gcore_k8sv2": {
				Description:   k8s["description"].(string),
				Schema:        must(toSchemaMap(k8s["schema"].(map[string]any))),
				Timeouts:      timeouts(k8s),
				CreateContext: clusterCreate,
				ReadContext:   clusterRead,
				UpdateContext: clusterUpdate,
				DeleteContext: clusterDelete,
				Importer:      &schema.ResourceImporter{StateContext: schema.ImportStatePassthroughContext},
			},
		},
		DataSourcesMap: map[string]*schema.Resource{
			"gcore_k8sv2_kubeconfig": {
				Description: kc["description"].(string),
				Schema:      must(toSchemaMap(kc["schema"].(map[string]any))),
				ReadContext: kubeconfigRead,
			},
		},
	}
}

// --- the fake API ------------------------------------------------------------------------------------------

func apiDir() string { return os.Getenv("GCORE_FAKE_API_DIR") }

func clusterPath(name string) string { return filepath.Join(apiDir(), "clusters", name+".json") }

type cluster struct {
	Name  string           `json:"name"`
	Pools []map[string]any `json:"pools"`
	Attrs map[string]any   `json:"attrs"`
}

func loadCluster(name string) (*cluster, error) {
	b, err := os.ReadFile(clusterPath(name))
	if err != nil {
		return nil, err
	}
	var c cluster
	return &c, json.Unmarshal(b, &c)
}

func saveCluster(c *cluster) error {
	if apiDir() == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(clusterPath(c.Name)), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(clusterPath(c.Name), b, 0o644)
}

// pools fills the attributes the API computes for each pool (node_count, status, ...).
func pools(d *schema.ResourceData, old []any) []any {
	now := time.Now().UTC().Format(time.RFC850)
	var out []any
	for _, p := range d.Get("pool").([]any) {
		pool := p.(map[string]any)
		if pool["max_node_count"].(int) == 0 {
			pool["max_node_count"] = pool["min_node_count"]
		}
		pool["node_count"] = pool["min_node_count"]
		pool["status"] = "Running"
		pool["created_at"] = now
		for _, o := range old {
			if prev := o.(map[string]any); prev["name"] == pool["name"] && prev["created_at"] != nil {
				pool["created_at"] = prev["created_at"]
			}
		}
		out = append(out, pool)
	}
	return out
}

func setComputed(d *schema.ResourceData, poolList []any) diag.Diagnostics {
	name := d.Get("name").(string)
	for k, v := range map[string]any{
		"status": "Provisioned", "is_public": true, "security_group_id": "fake-sg-" + name,
		"creator_task_id": "fake-task-create-" + name, "task_id": "",
	} {
		if err := d.Set(k, v); err != nil {
			return diag.FromErr(err)
		}
	}
	if d.Get("created_at").(string) == "" {
		_ = d.Set("created_at", time.Now().UTC().Format(time.RFC850))
	}
	if err := d.Set("pool", poolList); err != nil {
		return diag.FromErr(err)
	}
	return nil
}

func clusterCreate(ctx context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
	name := d.Get("name").(string)
	if apiDir() != "" {
		if _, err := os.Stat(clusterPath(name)); err == nil {
			return diag.Errorf("cluster %q already exists in this project and region", name)
		}
	}
	p := pools(d, nil)
	if diags := setComputed(d, p); diags != nil {
		return diags
	}
	d.SetId(name)
	return diag.FromErr(saveCluster(&cluster{Name: name, Pools: toMaps(p), Attrs: map[string]any{
		"version": d.Get("version"), "autoscaler_config": d.Get("autoscaler_config")}}))
}

func toMaps(l []any) []map[string]any {
	out := make([]map[string]any, 0, len(l))
	for _, p := range l {
		out = append(out, p.(map[string]any))
	}
	return out
}

func clusterRead(ctx context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
	if apiDir() == "" {
		return nil // no API to ask: the state is the truth
	}
	if _, err := loadCluster(d.Id()); os.IsNotExist(err) {
		d.SetId("")
		return nil
	} else if err != nil {
		return diag.FromErr(err)
	}
	return nil
}

func findPool(list []any, name any) map[string]any {
	for _, p := range list {
		if m := p.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// poolNeedsReplace: the attributes whose change makes the real provider delete and recreate a pool
// (resourceK8sV2ClusterPoolNeedsReplace in gcore/resource_gcore_k8sv2.go at the pinned tag).
func poolNeedsReplace(old, new map[string]any) bool {
	for _, k := range []string{"flavor_id", "boot_volume_type", "boot_volume_size", "is_public_ipv4",
		"servergroup_policy", "crio_config", "kubelet_config"} {
		if !reflect.DeepEqual(old[k], new[k]) {
			return true
		}
	}
	return false
}

func clusterUpdate(ctx context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
	o, n := d.GetChange("pool")
	old, new := o.([]any), n.([]any)
	for _, p := range new {
		np := p.(map[string]any)
		if op := findPool(old, np["name"]); op != nil && poolNeedsReplace(op, np) && len(old) == 1 {
			// The real provider's message for this case (resourceK8sV2Update).
			return diag.Errorf("cannot replace the only pool in the cluster, please create a new pool with " +
				"different name and remove this one")
		}
	}
	p := pools(d, old)
	if diags := setComputed(d, p); diags != nil {
		return diags
	}
	return diag.FromErr(saveCluster(&cluster{Name: d.Id(), Pools: toMaps(p), Attrs: map[string]any{
		"version": d.Get("version"), "autoscaler_config": d.Get("autoscaler_config")}}))
}

func clusterDelete(ctx context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
	if apiDir() != "" {
		if err := os.Remove(clusterPath(d.Id())); err != nil && !os.IsNotExist(err) {
			return diag.FromErr(err)
		}
	}
	if hook := os.Getenv("GCORE_FAKE_ON_DELETE"); hook != "" {
		cmd := exec.CommandContext(ctx, "sh", "-c", hook)
		cmd.Env = append(os.Environ(), "GCORE_FAKE_CLUSTER="+d.Id())
		if out, err := cmd.CombinedOutput(); err != nil {
			return diag.Errorf("GCORE_FAKE_ON_DELETE failed: %v: %s", err, out)
		}
	}
	d.SetId("")
	return nil
}

func kubeconfigRead(ctx context.Context, d *schema.ResourceData, _ any) diag.Diagnostics {
	name := d.Get("cluster_name").(string)
	if apiDir() != "" {
		if _, err := loadCluster(name); err != nil {
			return diag.Errorf("cant get cluster: %s", err)
		}
	}
	host := fmt.Sprintf("https://%s.fake-gcore.invalid:6443", name)
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: %[1]s\n  cluster: {server: '%[2]s'}\n"+
		"users:\n- name: %[1]s-admin\n  user: {token: fake}\ncontexts:\n- name: %[1]s\n  context: {cluster: %[1]s, "+
		"user: %[1]s-admin}\ncurrent-context: %[1]s\n", name, host)
	if path := os.Getenv("GCORE_FAKE_KUBECONFIG"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return diag.FromErr(err)
		}
		kubeconfig = string(b)
	}
	for k, v := range map[string]any{"kubeconfig": kubeconfig, "host": host, "cluster_ca_certificate": "",
		"client_certificate": "", "client_key": ""} {
		if err := d.Set(k, v); err != nil {
			return diag.FromErr(err)
		}
	}
	d.SetId(name)
	return nil
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-print-schema" {
		// The schemas as schemagen read them from the provider's source: the repository keeps a copy as a fixture.
		_, _ = os.Stdout.Write(schemaJSON)
		return
	}
	plugin.Serve(&plugin.ServeOpts{ProviderFunc: provider})
}
