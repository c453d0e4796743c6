// Command pulumi-gen-python-sdk writes the Python SDK of a Pulumi package schema: the step that
// `pulumi package gen-sdk --language python` (and `pulumi install`) hands to the Python language host, whose
// module (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3) the Go proxy does not serve.
// It makes the same two calls the host's GeneratePackage makes, from the same pkg/v3 as the CLI: bind the
// schema (dangling references allowed) and run pkg/codegen/python.GeneratePackage as "pulumi-language-python".
//
//	pulumi-gen-python-sdk SCHEMA.json OUT_DIR
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pulumi-gen-python-sdk SCHEMA.json OUT_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "pulumi-gen-python-sdk:", err)
		os.Exit(1)
	}
}

func run(schemaPath, out string) error {
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return err
	}
	loader := schema.NewCachedLoader(schema.NewPluginLoader(nil))
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return err
	}
	if diags.HasErrors() {
		return diags
	}
	files, err := python.GeneratePackage("pulumi-language-python", pkg, nil, loader)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for name, data := range files {
		path := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
