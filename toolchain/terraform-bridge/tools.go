//go:build tools

// Package tools pins the main packages this wrapper builds.
package tools

import (
	_ "github.com/pulumi/pulumi-terraform-bridge/v3/dynamic"
)
