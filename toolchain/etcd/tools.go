//go:build tools

// Package tools pins the main packages this wrapper builds.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
