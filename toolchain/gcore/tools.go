//go:build tools

// Package tools records the provider's main package in go.mod; toolchain/build.py deletes this file and builds it.
package tools

import _ "github.com/terraform-providers/terraform-provider-gcore"
