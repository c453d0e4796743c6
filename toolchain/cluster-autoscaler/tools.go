//go:build tools

// Package tools records cluster-autoscaler's main package in go.mod; toolchain/build.py deletes this file.
package tools

import _ "k8s.io/autoscaler/cluster-autoscaler"
