//go:build tools

// Package tools pins the main packages this wrapper builds.
package tools

import (
	_ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
	_ "github.com/pulumi/pulumi/pkg/v3/codegen/python"
)
