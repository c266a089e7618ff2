package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/spf13/cobra"
)

// sourceImport holds import's flags for other tools' session files:
// --from switches `logbook import` from restoring a logbook export to
// reading Claude Code, Codex or pi files (service.ImportSource).
type sourceImport struct {
	from string
}

// register adds the flags to import. Flags of the live mirror (--follow)
// register beside these, in their own file.
func (s *sourceImport) register(cmd *cobra.Command) {
	names := service.DialectNames()
	cmd.Flags().StringVar(&s.from, "from", "", "read other tools' session files (FILE or DIR...) instead of an export: `TOOL` is one of "+strings.Join(names, ", "))
}

// on reports whether the flags ask for a source import.
func (s *sourceImport) on() bool { return s.from != "" }

// sourceImportHelp is import's help text for --from.
const sourceImportHelp = "\n\nWith --from TOOL, import reads other tools' session files instead: each PATH\n" +
	"is a file or a directory (walked recursively) of .jsonl or .jsonl.zst files.\n" +
	"Each file becomes a lenient session named after the tool's id\n" +
	"(claude-code-<sessionId>, codex-<id>, pi-<id>; --as ID renames a single\n" +
	"one), holding every source line byte for byte as a source/line record and\n" +
	"the typed events it maps to. Damaged lines are kept and reported, never\n" +
	"fatal. Importing again appends only what is new; a rewritten file becomes\n" +
	"a revision <id>-rev-<n>. --from auto picks per file the tool that claims\n" +
	"most of its lines. --json prints {files, sessions, events, damagedLines}.\n" +
	"`logbook export ID --format TOOL` writes the file back (docs/import.md)."

// run imports paths and prints the summary: JSON with --json, else a few
// lines for people.
func (s *sourceImport) run(ctx context.Context, a *app, paths []string, as string) error {
	svc, err := a.writeService(ctx)
	if err != nil {
		return err
	}
	sum, err := svc.ImportSource(ctx, service.ImportSourceRequest{From: s.from, Paths: paths, As: as})
	if err != nil && sum.Files == 0 {
		return err // refused before any file was read: nothing to sum up
	}
	if a.json {
		b, jerr := json.Marshal(sum)
		if jerr != nil {
			return jerr
		}
		if werr := writeLine(a.stdout, b); werr != nil {
			return werr
		}
	} else {
		writeSummary(a.stdout, sum)
	}
	return err
}

// writeSummary writes an import summary for people.
func writeSummary(w io.Writer, sum service.ImportSummary) {
	fmt.Fprintf(w, "imported %d file(s): %d event(s) appended to %d session(s)\n", sum.Files, sum.Events, len(sum.Sessions))
	for _, id := range sum.Sessions {
		fmt.Fprintf(w, "  %s\n", id)
	}
	if len(sum.DamagedLines) > 0 {
		fmt.Fprintf(w, "%d damaged line(s), kept raw:\n", len(sum.DamagedLines))
		for _, d := range sum.DamagedLines {
			fmt.Fprintf(w, "  %s:%d: %s\n", d.File, d.Line, d.Reason)
		}
	}
}

// isSourceFormat reports whether export's --format names a tool whose
// files logbook import reads.
func isSourceFormat(format string) bool {
	return format != "" && format != "auto" && slices.Contains(service.DialectNames(), format)
}

// exportSource writes the tool's source file of session id back (to
// f.out, or stdout).
func (f *exportFormat) exportSource(ctx context.Context, a *app, id string) error {
	svc, err := a.service(ctx)
	if err != nil {
		return err
	}
	w := a.stdout
	if f.out != "" {
		file, err := os.OpenFile(f.out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return sdk.Wrapf(sdk.CodeIOError, "export", err, "creating %s", f.out)
		}
		defer file.Close()
		w = file
		if _, err := svc.ExportSource(ctx, id, f.format, w); err != nil {
			return err
		}
		return file.Close()
	}
	_, err = svc.ExportSource(ctx, id, f.format, w)
	return err
}
