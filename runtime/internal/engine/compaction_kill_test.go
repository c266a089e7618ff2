package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/compaction"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The test binary re-executed with LOGBOOK_TEST_COMPACTION_CHILD set is the
// host that gets killed: init runs before TestMain, so the child never runs
// the tests.
func init() {
	if os.Getenv("LOGBOOK_TEST_COMPACTION_CHILD") != "" {
		compactionChild()
		os.Exit(0)
	}
}

// blockingSummarizer makes the log durable up to compaction/start, reports
// the surface, and never answers: the host is killed inside the bracket.
type blockingSummarizer struct {
	st *store.Store
	s  *session.Session
}

func (b blockingSummarizer) Summarize(ctx context.Context, _ sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	if _, err := b.st.Flush(ctx, b.s); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	sv, _ := b.s.Surface()
	parts := []string{}
	for _, n := range sv.Nodes() {
		parts = append(parts, strconv.FormatInt(int64(n), 10))
	}
	fmt.Println("summarizing", strings.Join(parts, ","))
	select {}
}

// compactionChild starts an engine over JSONL, builds a session with an open
// turn and starts an automatic compaction whose summarizer blocks.
func compactionChild() {
	ctx := context.Background()
	cfg := config.Headless(config.Overrides{DataDir: os.Getenv("LOGBOOK_TEST_COMPACTION_DIR")})
	e, err := Start(ctx, cfg, Options{Executable: os.Getenv("LOGBOOK_TEST_COMPACTION_BIN")})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s, err := e.Store.Create(ctx, store.CreateOptions{ID: "killed"})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	c := &convo{t: childTB{}, ctx: ctx, s: s}
	c.start()
	c.turnStart("Please read the files.")
	for range 4 {
		c.stepStart()
		c.toolStep("{}", strings.Repeat("file contents ", 200))
		c.stepEnd()
	}
	c.stepStart()
	comp, err := compaction.New(config.Default(config.Overrides{}).Compaction, compaction.Options{Summarizer: blockingSummarizer{e.Store, s}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	// Nodes: 0 system prompt, 3 user, then (assistant, result) pairs.
	_, err = comp.CompactRegion(ctx, s, 3, 12, compaction.Automatic)
	fmt.Println("error: compaction returned", err)
	os.Exit(1)
}

// childTB reports convo failures of the child on stdout.
type childTB struct{ testing.TB }

func (childTB) Helper() {}
func (childTB) Fatalf(format string, args ...any) {
	fmt.Println("error", fmt.Sprintf(format, args...))
	os.Exit(1)
}

// kill -9 of the host between compaction/start and compaction/end: after
// Open, the session is not locked (the lifecycle marker releases the
// abandoned bracket, docs/architecture.md) and the surface is the pre-compaction one;
// a new compaction then succeeds.
func TestCompactionHostKilledInsideBracket(t *testing.T) {
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOGBOOK_TEST_COMPACTION_CHILD=1", "LOGBOOK_TEST_COMPACTION_DIR="+dir, "LOGBOOK_TEST_COMPACTION_BIN="+logbookBin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var surface []sdk.Seq
	deadline := time.After(60 * time.Second)
	for surface == nil {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the child exited before the summary call")
			}
			if strings.HasPrefix(line, "error") {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("child: %s", line)
			}
			if nodes, ok := strings.CutPrefix(line, "summarizing "); ok {
				for _, f := range strings.Split(nodes, ",") {
					n, _ := strconv.ParseInt(f, 10, 64)
					surface = append(surface, sdk.Seq(n))
				}
			}
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatal("the child made no progress in 60 s")
		}
	}
	kill9(t, cmd)

	ctx := context.Background()
	e, err := Start(ctx, compactionConfig(dir), Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	s, rep, err := e.Store.Open(ctx, "killed")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	start := -1
	for _, ev := range s.Events().All() {
		if ev.Type() == session.TypeCompactionStart {
			start = int(ev.Seq())
		}
		if start >= 0 {
			types = append(types, ev.Type())
		}
	}
	if start < 0 {
		t.Fatal("compaction/start was not durable before the kill")
	}
	// compaction/start, then Open's repair: the open step and turn closed
	// (docs/architecture.md), then the lifecycle marker; no compaction/end.
	if want := []string{session.TypeCompactionStart, session.TypeStepEnd, session.TypeTurnEnd, session.TypeSessionEndSeed}; !slices.Equal(types, want) {
		t.Fatalf("log from compaction/start: %v; want %v (repair %+v)", types, want, rep)
	}
	if b, open := compaction.OpenBracket(s.Events()); open {
		t.Fatalf("bracket %+v still locks the session after Open", b)
	}
	sv, err := s.Surface()
	if err != nil {
		t.Fatal(err)
	}
	if got := sv.Nodes(); !slices.Equal(got, surface) {
		t.Fatalf("surface after Open %v; want the pre-compaction %v", got, surface)
	}
	out2, err := e.Compactor.CompactNow(ctx, s, "after-crash")
	if err != nil {
		t.Fatalf("compaction after Open: %v", err)
	}
	if got := txNodesOf(t, s); !slices.Contains(got, out2.CheckpointSeq) {
		t.Fatalf("checkpoint %d not on the surface %v", out2.CheckpointSeq, got)
	}
}

func txNodesOf(t *testing.T, s *session.Session) []sdk.Seq {
	t.Helper()
	sv, err := s.Surface()
	if err != nil {
		t.Fatal(err)
	}
	return sv.Nodes()
}
