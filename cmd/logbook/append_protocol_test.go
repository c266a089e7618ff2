package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/protocolcases"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The agent-loop rules at `logbook append --continue`: each rule's line
// fails with exit status 1 and its code on the last stderr line naming the
// values, and changes nothing; the legal patterns are accepted; the
// operation cases append once with --operation-id.
// The sessions live in JSONL files with no compaction plugin to start, so
// each invocation is quick.
func TestAppendProtocolCases(t *testing.T) {
	data := t.TempDir()
	protocolcases.Run(t, cliDoor{data, writeConfig(t, data, "jsonl.hcl", `persistence "jsonl" {}`+"\n")}, protocolcases.Options{Lenient: true, Parallel: true, Operations: true})
}

// cliDoor drives the binary over one data directory and configuration.
type cliDoor struct{ data, config string }

func (d cliDoor) Create(t testing.TB, id string, lenient bool) protocolcases.Session {
	args := []string{"create", id}
	if lenient {
		args = append(args, "--protocol", "lenient")
	}
	if h := cli(t, d, "", args...).stdout; lenient && !strings.Contains(h, `"protocol":"lenient"`) {
		t.Fatalf("created with --protocol lenient, the header is %s", h)
	}
	return cliSession{d, id}
}

// cliSession is a stored session of the data directory.
type cliSession struct {
	d  cliDoor
	id string
}

// codeLine is the last stderr line of a failure.
var codeLine = regexp.MustCompile(`^logbook: ([A-Z0-9_]+): `)

// Append runs `logbook append ID --continue` with ins on stdin (so the
// open writes no closers and no marker).
func (s cliSession) Append(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	t.Helper()
	seqs, _, ref := s.append(t, ins)
	return seqs, ref
}

// AppendOnce runs `logbook append ID --continue --operation-id ID`: a
// replay says "replayed" on stderr.
func (s cliSession) AppendOnce(t testing.TB, id string, ins []protocolcases.Input) ([]sdk.Seq, bool, *protocolcases.Refusal) {
	t.Helper()
	seqs, r, ref := s.append(t, ins, "--operation-id", id)
	return seqs, ref == nil && strings.Contains(r.stderr, "replayed operation"), ref
}

// append runs `logbook append ID --continue` with ins on stdin and the
// further args.
func (s cliSession) append(t testing.TB, ins []protocolcases.Input, more ...string) ([]sdk.Seq, result, *protocolcases.Refusal) {
	t.Helper()
	var stdin strings.Builder
	for _, in := range ins {
		stdin.Write(in.Line())
		stdin.WriteByte('\n')
	}
	args := append([]string{"append", s.id, "--continue"}, more...)
	r := runIn(t.(*testing.T), s.d.data, stdin.String(), append(args, "--data", s.d.data, "--config", s.d.config)...)
	var seqs []sdk.Seq
	for _, l := range r.lines() {
		var e struct{ Seq sdk.Seq }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("logbook %v: a stdout line that is no envelope: %v: %s", args, err, l)
		}
		seqs = append(seqs, e.Seq)
	}
	if r.code == 0 {
		return seqs, r, nil
	}
	m := codeLine.FindStringSubmatch(r.lastLine())
	if m == nil {
		t.Fatalf("logbook %v: exit %d, last stderr line %q names no code", args, r.code, r.lastLine())
	}
	code := sdk.Code(m[1])
	if slices.Contains(protocolcases.Codes, code) && (r.code != 1 || len(seqs) != 0) {
		t.Errorf("logbook %v: %s with exit %d and %d envelopes on stdout, want exit 1 and none", args, code, r.code, len(seqs))
	}
	return nil, r, &protocolcases.Refusal{Code: code, DetailOnly: true, Text: r.lastLine()}
}

// Log runs `logbook events ID`.
func (s cliSession) Log(t testing.TB) []string { return cli(t, s.d, "", "events", s.id).lines() }

// cli runs the binary over d's data and configuration and fails t unless
// it succeeds.
func cli(t testing.TB, d cliDoor, stdin string, args ...string) result {
	t.Helper()
	return ok(t.(*testing.T), d.data, stdin, append(args, "--config", d.config)...)
}
