// Package demo is the guided tour behind `logbook demo`: a scripted coding
// agent (a deterministic mock model and two real tools over the demo's own
// workspace) works through a session stored by real plugin subprocesses.
// The runtime crashes mid tool call (a child process killed with SIGKILL),
// a resume repairs the interrupted turn, a compaction with the extractive
// summarizer condenses the history, and a fork branches from before the
// crash. Everything runs offline; the narration says what happened at each
// step and which CLI commands show what was stored.
package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The sessions the demo stores.
const (
	SessionID = "demo"
	ForkID    = "demo-fork"
)

// The user's requests, one per turn.
const (
	firstRequest  = "What does this project do?"
	crashRequest  = "Check main.go for bugs."
	resumeRequest = "Please continue: is main.go correct?"
)

// workerReady is the line the crash worker prints once its tool call is
// durable and it is "running the tool".
const workerReady = "tool-running"

// Options configure Run.
type Options struct {
	// Executable is the logbook binary: the plugins and the crash worker
	// (`logbook demo --worker`) run as its subprocesses. Required.
	Executable string
	// Dir is the demo's directory: its config (demo.hcl), workspace and
	// sessions. It must be empty or absent. Required.
	Dir string
	// Out receives the narration.
	Out io.Writer
	// Logger receives the runtime's logs; nil discards them.
	Logger hclog.Logger
}

// ConfigFile is the name of the configuration Run writes into Options.Dir:
// JSONL+zstd sessions under Dir/sessions, compaction with the bundled
// summarizer in extractive mode (no network) and the pruner.
const ConfigFile = "demo.hcl"

const demoConfig = `# Written by logbook demo.
data_dir = "sessions"

persistence "jsonl" {
  compression = "zstd"
}

compaction {
  summarizer = "compactor-summary"
  pruner     = "pruner"
}

plugin "compactor-summary" {
  config {
    mode = "extractive"
  }
}
`

// Run runs the tour.
func Run(ctx context.Context, o Options) error {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if err := emptyDir(o.Dir); err != nil {
		return err
	}
	ws, err := newWorkspace(filepath.Join(o.Dir, "workspace"))
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(o.Dir, ConfigFile)
	if err := os.WriteFile(cfgPath, []byte(demoConfig), 0o600); err != nil {
		return err
	}
	cfg, err := config.Load(cfgPath, config.Overrides{})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	t := &tour{out: o.Out, started: time.Now()}
	t.say("logbook demo: a scripted coding agent, stored as an append-only event log")
	t.say("  workspace  %s", ws.root)
	t.say("  sessions   %s (JSONL + zstd, through the jsonl plugin subprocess)", cfg.DataDir)

	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: o.Executable, Logger: o.Logger})
	if err != nil {
		return err
	}
	defer svc.Close(context.WithoutCancel(ctx))
	var pids []string
	for _, p := range svc.PluginProcesses() {
		pids = append(pids, fmt.Sprintf("%s (pid %d)", p.Name, p.Pid))
	}
	t.say("  plugins    %s", strings.Join(slices.Sorted(slices.Values(pids)), ", "))

	// 1. A first turn, live in this process.
	t.step("1. Turn 1: %q", firstRequest)
	s, err := svc.Create(ctx, service.CreateRequest{ID: SessionID, Header: events.CreateOptions{CWD: ws.root}})
	if err != nil {
		return err
	}
	ag := &agent{s: s, ws: ws}
	if err := ag.runTurn(ctx, firstRequest, events.HeaderInitial); err != nil {
		return err
	}
	boundary := sdk.Seq(s.Len() - 1) // turn/end of turn 1
	t.events(s.Events(), 0)
	if err := t.surface("surface after turn 1", s); err != nil {
		return err
	}
	if err := s.Release(ctx); err != nil {
		return err
	}

	// 2. A second turn in a child process, killed mid tool call.
	t.step("2. Turn 2: %q runs in a child process; it is killed with SIGKILL while its tool call runs", crashRequest)
	pid, err := crashWorker(ctx, o.Executable, cfgPath, cfg.DataDir)
	if err != nil {
		return err
	}
	t.say("  child %d logged tool/call and flushed it, then got SIGKILL", pid)

	// 3. Inspect: read-only, shows what a resume would write.
	t.step("3. Inspect (read-only): the stored log ends inside an open turn")
	in, err := svc.Inspect(ctx, SessionID)
	if err != nil {
		return err
	}
	stored := int(in.Events)
	t.say("  %d events stored; a resume would append %d closers:", stored, len(in.PendingRepair))
	t.events(in.PendingRepair, 0)

	// 4. Resume: the repair is appended and flushed before the session goes live.
	t.step("4. Resume: Open repairs the interrupted turn durably")
	s, rep, err := openWhenFree(ctx, svc)
	if err != nil {
		return err
	}
	t.say("  %d closers appended (the tool call had started, so its outcome is unknown):", rep.Closers)
	t.events(s.Events(), stored)

	// 5. The agent continues in a new turn; its first request logs a
	// "resume" header.
	t.step("5. Turn 3: %q", resumeRequest)
	ag = &agent{s: s, ws: ws, turn: lastTurn(s), calls: 100}
	if err := ag.runTurn(ctx, resumeRequest, events.HeaderResume); err != nil {
		return err
	}
	if err := t.surface("surface before compaction", s); err != nil {
		return err
	}

	// 6. Manual compaction with the extractive summarizer plugin.
	t.step("6. Compaction: the compactor-summary plugin (extractive mode) condenses the oldest nodes")
	before, err := s.SurfaceTokens()
	if err != nil {
		return err
	}
	evs, err := s.Compact(ctx, service.CompactOptions{SourceCommandID: "demo"})
	if err != nil {
		return err
	}
	out, err := compactionOf(evs)
	if err != nil {
		return err
	}
	after, err := s.SurfaceTokens()
	if err != nil {
		return err
	}
	// The demo's replies carry no usage, so the surface's estimate is the
	// sum of its nodes': the checkpoint's is what the surface gained back.
	checkpointTokens := after - before + out.shadowedTokens
	t.say("  compaction %s: %d nodes (%d tokens) replaced by checkpoint seq %d (%d tokens)",
		out.id, out.shadowed, out.shadowedTokens, out.checkpoint, checkpointTokens)
	t.say("  compaction/start %d, compaction/summary %d, checkpoint %d, compaction/end %d; the shadowed events stay in the log",
		out.start, out.summary, out.checkpoint, out.end)
	if err := t.surface("surface after compaction", s); err != nil {
		return err
	}
	if cp := s.Range(sdk.Offset(out.checkpoint), sdk.Offset(out.checkpoint)+1); len(cp) == 1 {
		var m struct {
			Content []struct{ Text string }
		}
		if json.Unmarshal(cp[0].Data, &m) == nil && len(m.Content) > 0 {
			t.say("  the checkpoint message the model now sees first:")
			for _, l := range strings.Split(clip(m.Content[0].Text, 600), "\n") {
				t.say("    | %s", l)
			}
		}
	}
	if err := s.Release(ctx); err != nil {
		return err
	}

	// 7. Fork from before the crash.
	t.step("7. Fork: %s branches from seq %d, the end of turn 1, before the crash", ForkID, boundary)
	child, err := svc.Fork(ctx, service.ForkRequest{Source: SessionID, At: &boundary, As: ForkID})
	if err != nil {
		return err
	}
	h := child.Header()
	t.say("  %s: parent %s, %d inherited events", h.ID, h.ParentSession, child.InheritedEvents())
	if err := t.surface("surface of the fork", child); err != nil {
		return err
	}
	if err := child.Release(ctx); err != nil {
		return err
	}

	t.step("Done in %.1f s. Look at what was stored:", time.Since(t.started).Seconds())
	bin := commandName(o.Executable)
	flags := "--config " + quote(cfgPath) + " --data " + quote(cfg.DataDir)
	for _, c := range []string{
		"sessions",
		"events " + SessionID,
		"transcript " + SessionID,
		"surface " + SessionID,
		fmt.Sprintf("messages %s --at %d", SessionID, boundary),
		"request " + SessionID + " --format openai",
		fmt.Sprintf("why %s %d", SessionID, out.checkpoint),
		"inspect " + ForkID,
	} {
		t.say("  %s %s %s", bin, flags, c)
	}
	t.say("  zstd -dc %s | head", quote(filepath.Join(cfg.DataDir, "*", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl.zst")))
	t.say("Look at them in a browser (the timeline, what the model saw at each seq, the fork tree): %s %s view %s", bin, flags, SessionID)
	t.say("Serve them to other programs with: %s %s serve", bin, flags)
	return nil
}

// Worker is the crash worker (`logbook demo --worker`): it resumes the
// demo session on svc, starts turn 2, logs and flushes the model's tool
// call, prints workerReady on ready and blocks until the parent kills it.
func Worker(ctx context.Context, svc *service.Service, ready io.Writer) error {
	s, _, err := svc.Resume(ctx, SessionID)
	if err != nil {
		return err
	}
	ws := &workspace{root: s.Header().CWD}
	ag := &agent{s: s, ws: ws, turn: lastTurn(s), calls: 50}
	if err := ag.begin(ctx, crashRequest); err != nil {
		return err
	}
	return ag.step(ctx, 1, script[crashRequest][0], events.HeaderResume, func() {
		fmt.Fprintln(ready, workerReady)
		<-ctx.Done() // the parent's SIGKILL ends the process first
	})
}

// crashWorker runs the crash worker and kills it with SIGKILL once its
// tool call is durable; it returns the worker's pid. --data is explicit so
// that a LOGBOOK_DATA of the user's shell cannot move the worker's store.
func crashWorker(ctx context.Context, exe, cfgPath, dataDir string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "demo", "--worker", "--config", cfgPath, "--data", dataDir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	line, rerr := bufio.NewReader(out).ReadString('\n')
	pid := cmd.Process.Pid
	_ = cmd.Process.Signal(syscall.SIGKILL)
	werr := cmd.Wait()
	if strings.TrimSpace(line) != workerReady {
		return pid, fmt.Errorf("demo: the crash worker stopped before its tool call (%v, %v): %s", rerr, werr, strings.TrimSpace(stderr.String()))
	}
	return pid, nil
}

// openWhenFree resumes the demo session. The killed worker's plugin
// subprocesses die with it (their parent-death signal), but the kernel may
// take a moment to release their lock, so ALREADY_OWNED is retried for a
// few seconds.
func openWhenFree(ctx context.Context, svc *service.Service) (*service.Session, service.RepairReport, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, rep, err := svc.Resume(ctx, SessionID)
		if !errors.Is(err, sdk.CodeAlreadyOwned) || time.Now().After(deadline) {
			return s, rep, err
		}
		select {
		case <-ctx.Done():
			return nil, service.RepairReport{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// emptyDir creates dir, or checks that it is empty.
func emptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return sdk.Errorf(sdk.CodeUsage, "demo", "%s is not empty; the demo needs a fresh directory", dir)
	}
	return nil
}

// tour writes the narration.
type tour struct {
	out     io.Writer
	started time.Time
}

func (t *tour) say(format string, args ...any) { fmt.Fprintf(t.out, format+"\n", args...) }

func (t *tour) step(format string, args ...any) {
	fmt.Fprintln(t.out)
	t.say(format, args...)
}

// events prints the events of log from seq from on, one line each; a
// tool result that carries an error shows its code.
func (t *tour) events(log []events.Event, from int) {
	for _, e := range log[from:] {
		var d struct {
			Error   struct{ Code string }
			Message struct {
				Content []struct{ Text string }
			}
		}
		if e.Type == events.TypeToolResult && json.Unmarshal(e.Data, &d) == nil && d.Error.Code != "" && len(d.Message.Content) > 0 {
			t.say("    %3d %-18s %s: %q", e.Seq, e.Type, d.Error.Code, clip(d.Message.Content[0].Text, 80))
			continue
		}
		t.say("    %3d %-18s %s", e.Seq, e.Type, clip(string(e.Data), 96))
	}
}

// surface prints the surface of s: its nodes and the token estimate.
func (t *tour) surface(title string, s *service.Session) error {
	sv, err := s.Surface()
	if err != nil {
		return err
	}
	tokens, err := s.SurfaceTokens()
	if err != nil {
		return err
	}
	log := s.Events()
	var nodes []string
	for _, seq := range sv {
		nodes = append(nodes, fmt.Sprintf("%d:%s", seq, strings.SplitN(log[seq].Type, "/", 2)[0]))
	}
	t.say("  %s (%d nodes, ~%d tokens): %s", title, len(sv), tokens, strings.Join(nodes, " "))
	return nil
}

// clip shortens s to about n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// commandName is how the narration names the logbook binary: "logbook"
// when that is what PATH finds, else its path (relative to the working
// directory when below it).
func commandName(exe string) string {
	if p, err := exec.LookPath("logbook"); err == nil && p == exe {
		return "logbook"
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, exe); err == nil && !strings.HasPrefix(rel, "..") {
			return "./" + rel
		}
	}
	return quote(exe)
}

// quote quotes a path for a shell when it holds white space or quotes.
func quote(s string) string {
	if strings.ContainsAny(s, " \t'\"") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// compaction is what the demo tells of a compaction: the seqs of its
// events and what its compaction/summary records.
type compaction struct {
	id                              string
	start, summary, checkpoint, end sdk.Seq
	shadowed                        int   // the surface nodes it replaced
	shadowedTokens                  int64 // their token estimate
}

// compactionOf reads a compaction from the events it appended
// (docs/format.md): compaction/start, compaction/summary, the checkpoint
// message right after it, compaction/end.
func compactionOf(evs []events.Event) (compaction, error) {
	var c compaction
	for i, ev := range evs {
		switch ev.Type {
		case "compaction/start":
			c.start = ev.Seq
		case "compaction/summary":
			var d struct {
				CompactionID       string    `json:"compactionId"`
				ShadowedSeqs       []sdk.Seq `json:"shadowedSeqs"`
				ShadowedTokenCount int64     `json:"shadowedTokenCount"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return c, fmt.Errorf("demo: the compaction/summary at seq %d: %w", ev.Seq, err)
			}
			c.id, c.shadowed, c.shadowedTokens, c.summary = d.CompactionID, len(d.ShadowedSeqs), d.ShadowedTokenCount, ev.Seq
			if i+1 < len(evs) {
				c.checkpoint = evs[i+1].Seq
			}
		case "compaction/end":
			c.end = ev.Seq
		}
	}
	if c.id == "" || c.checkpoint == 0 || c.end == 0 {
		return c, fmt.Errorf("demo: the compaction appended no complete bracket (%d events)", len(evs))
	}
	return c, nil
}
