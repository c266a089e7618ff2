package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// exportFormat holds export's --format, --content and -o flags. The
// default format is logbook's own JSONL; --format otlp writes the session
// as OpenTelemetry traces (service.ExportOTLP).
type exportFormat struct {
	format  string
	content bool
	out     string
}

// register adds the flags to export.
func (f *exportFormat) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.format, "format", "", "write `FORMAT` instead of logbook's JSONL: otlp (OpenTelemetry traces as OTLP/JSON, GenAI semantic conventions), or claude-code, codex, pi (the source file an import read, byte for byte)")
	cmd.Flags().BoolVar(&f.content, "content", false, "with --format otlp: include message content (model inputs and outputs, tool arguments and results)")
	cmd.Flags().StringVarP(&f.out, "output", "o", "", "with --format: write to `FILE` instead of stdout")
}

// otlp reports whether the flags ask for OTLP, refusing (USAGE) the flags
// that only OTLP takes without it.
func (f *exportFormat) otlp() (bool, error) {
	if f.format == "otlp" {
		return true, nil
	}
	if f.content || f.out != "" && !isSourceFormat(f.format) {
		return false, sdk.Errorf(sdk.CodeUsage, "export", "--content goes with --format otlp, -o with a --format")
	}
	if f.format != "" && !isSourceFormat(f.format) {
		return false, sdk.Errorf(sdk.CodeUsage, "export", "--format %q is not a format export writes; use otlp, claude-code, codex or pi, or leave --format out for logbook's JSONL", f.format)
	}
	return false, nil
}

// exportOTLP writes session id as OTLP/JSON to -o or stdout.
func (f *exportFormat) exportOTLP(ctx context.Context, a *app, id string) error {
	svc, err := a.service(ctx)
	if err != nil {
		return err
	}
	b, torn, err := svc.ExportOTLP(ctx, id, service.OTLPOptions{Content: f.content})
	if err != nil {
		return err
	}
	a.warnTorn("export", id, torn)
	b = append(b, '\n')
	if f.out == "" {
		_, err := a.stdout.Write(b)
		return err
	}
	if err := os.WriteFile(f.out, b, 0o600); err != nil {
		return &sdk.Error{Code: sdk.CodeIOError, Op: "export", Detail: "cannot write " + f.out, Err: err}
	}
	return nil
}
