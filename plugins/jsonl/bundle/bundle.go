// Package bundle registers the bundled plugin "jsonl" (package jsonl) with
// pluginrpc.Bundle, so the program that imports it serves the plugin as
// `<program> plugin jsonl`:
//
//	import _ "github.com/seed-e5e476df/logbook/plugins/jsonl/bundle"
//
// It is light: package logbook imports it, so every embedding program links
// it. The logbook binary imports every bundle package.
package bundle

import (
	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

func init() { pluginrpc.Bundle("jsonl", jsonl.ServeConfig) }
