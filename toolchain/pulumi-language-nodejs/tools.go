//go:build tools

// Package tools records the language host's main package in go.mod; toolchain/build.py deletes this file.
package tools

import _ "github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3"
