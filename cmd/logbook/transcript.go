package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// transcriptEntry is one entry of `logbook transcript --json`.
type transcriptEntry struct {
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	Message   json.RawMessage `json:"message"`
	OnSurface bool            `json:"onSurface"`
}

// How much of a long tool output or checkpoint the text transcript shows
// without --full.
const (
	transcriptMaxLines = 12  // lines of one block
	transcriptMaxWidth = 240 // bytes of one line
)

// newTranscriptCmd is `logbook transcript ID`.
func newTranscriptCmd(a *app) *cobra.Command {
	var full bool
	cmd := &cobra.Command{
		Use:         "transcript ID",
		Annotations: offersJSONAnnotation(),
		Short:       "Print the conversation for a person: turns with their times, tool calls with their outcome, compaction checkpoints (--json: array)",
		Long: "transcript prints the messages of a session as they were written, turn by turn: a\n" +
			"header with the turn's start time, each message under its seq and role, each tool\n" +
			"result with the tool's name and its outcome (ok or error), the end of the turn with its\n" +
			"reason, and a compaction checkpoint where it replaced earlier history. Entries no longer\n" +
			"on the surface are marked. Long tool output and checkpoints are shortened, with a marker\n" +
			"saying how much was left out; --full shows everything.\n\n" +
			"On a terminal the output is coloured (unless NO_COLOR is set) and shown through\n" +
			"$PAGER (else less) when it is longer than the screen. --json prints the entries as a\n" +
			"JSON array of {seq, type, message, onSurface}.",
		Example: "  logbook transcript demo\n" +
			"  logbook transcript demo --full | grep -n FAIL\n" +
			"  logbook transcript demo --json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := a.storedView(cmd.Context(), cmd.Name(), args[0], nil)
			if err != nil {
				return err
			}
			nodes, err := v.Surface()
			if err != nil {
				return err
			}
			surf := make(map[sdk.Seq]bool, len(nodes))
			for _, seq := range nodes {
				surf[seq] = true
			}
			if a.json {
				t := v.Transcript()
				entries := make([]transcriptEntry, 0, len(t))
				for _, en := range t {
					entries = append(entries, transcriptEntry{Seq: int64(en.Seq), Type: en.Type, Message: en.Message, OnSurface: surf[en.Seq]})
				}
				return writeJSON(a.stdout, entries)
			}
			tty, rows := terminal(a.stdout)
			var buf bytes.Buffer
			tw := transcriptWriter{w: &buf, full: full, color: tty && os.Getenv("NO_COLOR") == ""}
			tw.write(v, surf)
			return page(a.stdout, buf.Bytes(), tty, rows)
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "show long tool output and checkpoints in full")
	return cmd
}

// terminal reports whether w is a terminal, and its height in rows (0
// when unknown).
func terminal(w io.Writer) (tty bool, rows int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	_, rows, err := term.GetSize(int(f.Fd()))
	if err != nil {
		rows = 0
	}
	return true, rows
}

// page writes out to w, through $PAGER (else less, when installed) when w
// is a terminal of rows rows and out has more lines than that. A pager
// that cannot be started is skipped; its failure once started is not an
// error of the command (the reader may quit it early).
func page(w io.Writer, out []byte, tty bool, rows int) error {
	if tty && rows > 0 && bytes.Count(out, []byte{'\n'}) >= rows {
		pager := os.Getenv("PAGER")
		if pager == "" {
			if _, err := exec.LookPath("less"); err == nil {
				pager = "less"
			}
		}
		if pager != "" && pager != "cat" {
			c := exec.Command("/bin/sh", "-c", pager)
			c.Stdin, c.Stdout, c.Stderr = bytes.NewReader(out), w, os.Stderr
			if os.Getenv("LESS") == "" {
				c.Env = append(os.Environ(), "LESS=FRX") // keep the colours; quit at once when it fits
			}
			if err := c.Start(); err == nil {
				_ = c.Wait()
				return nil
			}
		}
	}
	_, err := w.Write(out)
	return err
}

// ANSI styles of the transcript on a terminal.
const (
	styleBold  = "1"
	styleDim   = "2"
	styleRed   = "31"
	styleGreen = "32"
	styleCyan  = "36"
	styleBlue  = "34"
)

// transcriptWriter renders a session's transcript as text.
type transcriptWriter struct {
	w     io.Writer
	full  bool // no shortening
	color bool // ANSI styles
}

// paint returns s in style when colours are on.
func (tw transcriptWriter) paint(style, s string) string {
	if !tw.color {
		return s
	}
	return "\x1b[" + style + "m" + s + "\x1b[0m"
}

// write renders v: the transcript entries in log order, with the turn
// boundaries and the compaction checkpoints among them; surf holds the
// surface nodes.
func (tw transcriptWriter) write(v *service.Session, surf map[sdk.Seq]bool) {
	bw := bufio.NewWriter(tw.w)
	defer bw.Flush()
	entries := map[int64]events.TranscriptEntry{}
	for _, en := range v.Transcript() {
		entries[int64(en.Seq)] = en
	}
	tools := map[string]string{} // call id → tool name
	for _, e := range v.Events() {
		seq := int64(e.Seq)
		when := time.UnixMilli(e.Time).UTC().Format(time.RFC3339)
		switch e.Type {
		case events.TypeTurnStart:
			turn := jsonView(e.Data).Get("turn").Literal()
			fmt.Fprintf(bw, "%s\n", tw.paint(styleCyan+";"+styleBold, fmt.Sprintf("── turn %s · %s", turn, when)))
			continue
		case events.TypeTurnEnd:
			d := jsonView(e.Data)
			kind, _ := d.Get("reason").Get("kind").Str()
			style := styleCyan
			if kind != "completed" {
				style = styleRed
			}
			fmt.Fprintf(bw, "%s\n", tw.paint(style, fmt.Sprintf("── turn %s %s · %s", d.Get("turn").Literal(), kind, when)))
			continue
		}
		if en, ok := entries[seq]; ok {
			tw.entry(bw, en, surf[en.Seq], tools)
			continue
		}
		if op := e.SurfaceOp; op != nil && op.Replace {
			if raw, ok := v.Message(e.Seq); ok {
				m := jsonView(raw)
				if kind, _ := m.Get("source").Get("kind").Str(); kind == "compact-checkpoint" {
					head := fmt.Sprintf("#%d compaction checkpoint · replaces #%d–#%d · %s", seq, op.StartSeq, op.EndSeq, when)
					fmt.Fprintf(bw, "%s\n", tw.paint(styleBlue+";"+styleBold, head))
					tw.lines(bw, service.ContentLines(m.Get("content")))
				}
			}
		}
	}
}

// entry renders one transcript entry: `#<seq> <role>`, for a tool result
// the tool and its outcome, a mark when it is no longer on the surface,
// then its content indented.
func (tw transcriptWriter) entry(w io.Writer, en events.TranscriptEntry, onSurface bool, tools map[string]string) {
	msg := jsonView(en.Message)
	role, _ := msg.Get("role").Str()
	head := fmt.Sprintf("#%d %s", en.Seq, tw.paint(styleBold, role))
	if role == "assistant" {
		for _, b := range msg.Get("content").Elements() {
			if typ, _ := b.Get("type").Str(); typ == "tool-call" {
				id, _ := b.Get("id").Str()
				tools[id], _ = b.Get("name").Str()
			}
		}
	}
	lines := service.ContentLines(msg.Get("content"))
	if role == "tool" {
		call, _ := msg.Get("toolCallId").Str()
		name := tools[call]
		if name == "" {
			name = "call " + call
		}
		outcome := tw.paint(styleGreen, "ok")
		if isErr, _ := msg.Get("isError").Bool(); isErr {
			outcome = tw.paint(styleRed+";"+styleBold, "error")
		}
		head += " " + name + ": " + outcome
	}
	if !onSurface {
		head += "  " + tw.paint(styleDim, "[not on surface]")
	}
	fmt.Fprintf(w, "%s\n", head)
	if role == "tool" {
		tw.lines(w, lines)
		return
	}
	for _, l := range lines {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// jsonView returns a reader of the stored JSON b; JSON that does not parse
// (none a log holds) reads as absent.
func jsonView(b []byte) jsonv.Value {
	d, err := jsonv.Parse(b, jsonv.Options{})
	if err != nil {
		return jsonv.Value{}
	}
	return d.Root()
}

// lines writes the lines of a tool output or checkpoint, indented; without
// --full at most transcriptMaxLines lines of at most transcriptMaxWidth
// bytes, and a marker saying what was left out.
func (tw transcriptWriter) lines(w io.Writer, lines []string) {
	shown := lines
	if !tw.full && len(lines) > transcriptMaxLines {
		shown = lines[:transcriptMaxLines-2]
	}
	cut := 0
	for _, l := range shown {
		if !tw.full && len(l) > transcriptMaxWidth {
			n := transcriptMaxWidth
			for n > 0 && !utf8.RuneStart(l[n]) {
				n--
			}
			cut += len(l) - n
			l = l[:n] + "…"
		}
		fmt.Fprintf(w, "    %s\n", l)
	}
	var left []string
	if more := len(lines) - len(shown); more > 0 {
		left = append(left, plural(int64(more), "more line"))
	}
	if cut > 0 {
		left = append(left, fmt.Sprintf("%d bytes of long lines", cut))
	}
	if len(left) > 0 {
		fmt.Fprintf(w, "    %s\n", tw.paint(styleDim, "… "+strings.Join(left, " and ")+" not shown (--full shows all)"))
	}
}
