package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// followFlags are import's live-mirror flags (--follow, --poll).
type followFlags struct {
	on, poll bool
}

// register adds the flags to import.
func (f *followFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.on, "follow", false, "keep importing: every file present, then new and grown files as they are written, until interrupted (no DIR: each tool's own directory that exists)")
	cmd.Flags().BoolVar(&f.poll, "poll", false, "with --follow: look at the files every 250ms instead of using file notifications (NFS)")
}

// check refuses --poll without --follow, and --as with it (a mirror
// imports many sessions under their own ids).
func (f *followFlags) check(as string) error {
	if f.poll && !f.on {
		return sdk.Errorf(sdk.CodeUsage, "import", "--poll needs --follow")
	}
	if f.on && as != "" {
		return sdk.Errorf(sdk.CodeUsage, "import", "--as cannot be used with --follow: a mirror keeps each session's own id")
	}
	return nil
}

// followSources returns what `import --follow` watches: dirs read as from
// ("" = auto), or with no dirs each tool's own directory that exists.
func followSources(from string, dirs []string) ([]service.MirrorSource, error) {
	if len(dirs) > 0 {
		if from == "" {
			from = "auto"
		}
		out := make([]service.MirrorSource, len(dirs))
		for i, d := range dirs {
			out[i] = service.MirrorSource{From: from, Dir: d}
		}
		return out, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeUsage, "import", "there is no home directory (HOME is unset) to find the tools' sessions in: name the directories to follow")
	}
	var out, tried []service.MirrorSource
	for _, tool := range config.SourceTools() {
		dir := config.DefaultSourceDir(tool, home)
		if dir == "" || (from != "" && from != "auto" && from != tool) {
			continue
		}
		tried = append(tried, service.MirrorSource{From: tool, Dir: dir})
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			out = append(out, service.MirrorSource{From: tool, Dir: dir})
		}
	}
	if len(out) == 0 {
		names := make([]string, len(tried))
		for i, t := range tried {
			names[i] = t.Dir
		}
		return nil, sdk.Errorf(sdk.CodeUsage, "import", "nothing to follow: %s does not exist; name the directories to follow", strings.Join(names, ", "))
	}
	return out, nil
}

// runFollow is `logbook import --follow [DIR...]`: a service.Mirror over the
// sources until ctx ends (SIGINT, SIGTERM), printing a line per pass.
func runFollow(ctx context.Context, a *app, from string, dirs []string, poll bool) error {
	sources, err := followSources(from, dirs)
	if err != nil {
		return err
	}
	svc, err := a.writeService(ctx)
	if err != nil {
		return err
	}
	m, err := svc.NewMirror(service.MirrorOptions{Sources: sources, Poll: poll})
	if err != nil {
		return err
	}
	mode, why := m.Mode()
	for _, src := range sources {
		fmt.Fprintf(a.stderr, "following %s (%s) with %s\n", src.Dir, src.From, mode)
	}
	if why != nil {
		fmt.Fprintf(a.stderr, "%v\n", why)
	}
	var printErr error
	pass := 0
	err = m.Run(ctx, func(p service.MirrorPass) {
		pass++
		if p.Mode != mode {
			mode = p.Mode
			fmt.Fprintf(a.stderr, "now following with %s: %v\n", mode, p.Why)
		}
		if printErr == nil {
			printErr = writePass(a, pass, p)
		}
	})
	if err != nil {
		return err
	}
	return printErr
}

// passJSON is a pass as --json prints it: import's summary plus the pass.
type passJSON struct {
	Pass         int           `json:"pass"`
	First        bool          `json:"first"`
	Mode         string        `json:"mode"`
	Files        int           `json:"files"`
	Sessions     []string      `json:"sessions"`
	Events       int64         `json:"events"`
	DamagedLines []damagedJSON `json:"damagedLines"`
	Error        string        `json:"error,omitempty"`
}

// damagedJSON is one damaged line in passJSON.
type damagedJSON struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// writePass prints one pass: a JSON line with --json, else a line of text
// (and one per damaged line).
func writePass(a *app, n int, p service.MirrorPass) error {
	s := p.Summary
	if a.json {
		j := passJSON{Pass: n, First: p.First, Mode: p.Mode, Files: s.Files, Sessions: s.Sessions, Events: s.Events, DamagedLines: []damagedJSON{}}
		if j.Sessions == nil {
			j.Sessions = []string{}
		}
		for _, d := range s.DamagedLines {
			j.DamagedLines = append(j.DamagedLines, damagedJSON{File: d.File, Line: d.Line, Reason: d.Reason})
		}
		if p.Err != nil {
			j.Error = p.Err.Error()
		}
		b, err := json.Marshal(j)
		if err != nil {
			return err
		}
		return writeLine(a.stdout, b)
	}
	what := "pass"
	if p.First {
		what = "first pass"
	}
	line := fmt.Sprintf("%s %d: %s, %s, %s", what, n, plural(int64(s.Files), "file"), plural(s.Events, "event"), plural(int64(len(s.Sessions)), "session"))
	if len(s.Sessions) > 0 && len(s.Sessions) <= 3 {
		line += " (" + strings.Join(s.Sessions, ", ") + ")"
	}
	if len(s.DamagedLines) > 0 {
		line += ", " + plural(int64(len(s.DamagedLines)), "damaged line")
	}
	if p.Err != nil {
		line += "; failed, will retry: " + strings.ReplaceAll(p.Err.Error(), "\n", "; ")
	}
	if _, err := fmt.Fprintln(a.stdout, line); err != nil {
		return err
	}
	for _, d := range s.DamagedLines {
		if _, err := fmt.Fprintf(a.stdout, "  %s:%d: %s\n", d.File, d.Line, d.Reason); err != nil {
			return err
		}
	}
	return nil
}
