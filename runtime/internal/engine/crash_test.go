package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/internal/testserve"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// crashBackends are the durable backends the crash test kills writers of,
// each with its config for a data directory.
var crashBackends = []struct {
	name string
	conf func(dir string) []byte
}{
	{"jsonl", func(dir string) []byte {
		b, _ := json.Marshal(map[string]any{"root": dir, "compression": "zstd"})
		return b
	}},
	{"sqlite", func(dir string) []byte {
		b, _ := json.Marshal(map[string]any{"path": dir + "/sessions.db"})
		return b
	}},
}

func crashConfig(backend string, conf []byte) *config.Config {
	cfg := config.Headless(config.Overrides{})
	cfg.Persistence = []config.Persistence{{Name: backend, Config: conf}}
	return cfg
}

// writerProcess is the test binary re-executed as a writer: it opens (or
// creates) the session, appends corpus events and flushes every few, and
// prints "flushed <len>" after each successful flush, until it is killed.
func writerProcess() {
	backend, dir, id := os.Getenv("LOGBOOK_TEST_WRITER"), os.Getenv("LOGBOOK_TEST_WRITER_DIR"), os.Getenv("LOGBOOK_TEST_WRITER_SESSION")
	var conf []byte
	for _, b := range crashBackends {
		if b.name == backend {
			conf = b.conf(dir)
		}
	}
	ctx := context.Background()
	e, err := Start(ctx, crashConfig(backend, conf), Options{Executable: os.Getenv("LOGBOOK_TEST_WRITER_BIN")})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s, _, err := e.Store.Open(ctx, id)
	if err != nil {
		s, err = e.Store.Create(ctx, store.CreateOptions{ID: id})
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	w := newLoopWriter(uint64(time.Now().UnixNano()), s)
	for i := 0; ; i++ {
		in, ok := w.next()
		if !ok {
			continue // a second "initial" header would be refused
		}
		if _, err := s.Append(ctx, in); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if i%25 == 24 {
			if _, err := e.Store.Flush(ctx, s); err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
			fmt.Println("flushed", s.Len())
		}
	}
}

// loopWriter writes corpus turns the way a harness does: after a restart it
// continues with the turn above the highest one in the log (the repair has
// closed the one the kill interrupted), and it numbers the corpus's turns up
// from there, again and again.
type loopWriter struct {
	s      *session.Session
	events [][]byte // whole corpus turns: the corpus cut after its last turn/end
	turns  int      // the number of turns in events
	base   int      // the number added to a corpus turn
	i      int
}

func newLoopWriter(seed uint64, s *session.Session) *loopWriter {
	events := corpus.Session(seed, 2_000)
	w := &loopWriter{s: s}
	for i, env := range events {
		ev, _ := session.ParseEnvelope(env, 0)
		if ev.Type() == "turn/end" {
			w.events, w.turns = events[:i+1], turnOf(ev.Data())
		}
	}
	for _, ev := range s.Events().Slice() {
		if ev.Type() == "turn/start" {
			w.base = max(w.base, turnOf(ev.Data()))
		}
	}
	return w
}

// next returns the next event to append, renumbered, and false for an event
// that only the log's first turn may hold (the initial request/header).
func (w *loopWriter) next() (session.AppendInput, bool) {
	if w.i == len(w.events) {
		w.i, w.base = 0, w.base+w.turns
	}
	in := corpusInput(w.events[w.i])
	w.i++
	if in.Type == session.TypeRequestHeader && w.s.Len() > 0 {
		return in, false
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(in.Data, &data); err == nil && data["turn"] != nil {
		data["turn"] = json.RawMessage(strconv.Itoa(w.base + turnOf(in.Data)))
		in.Data, _ = json.Marshal(data)
	}
	return in, true
}

// corpusInput is the append input of a corpus envelope.
func corpusInput(env []byte) session.AppendInput {
	ev, _ := session.ParseEnvelope(env, 0)
	in := session.AppendInput{Type: ev.Type(), Data: ev.Data()}
	if op, ok := ev.SurfaceOp(); ok {
		in.SurfaceOp = &op
	}
	return in
}

// turnOf is the "turn" member of an event's data, 0 when it has none.
func turnOf(data []byte) int {
	var v struct{ Turn int }
	_ = json.Unmarshal(data, &v)
	return v.Turn
}

// A writer process is killed with SIGKILL at random moments, 50 times per
// backend: after each kill every flushed event is still there, the log
// restores, and Open leaves no open turn behind.
func TestCrashWriterKilledRepeatedly(t *testing.T) {
	for _, b := range crashBackends {
		t.Run(b.name, func(t *testing.T) {
			dir := t.TempDir()
			rng := rand.New(rand.NewPCG(uint64(len(b.name)), 1))
			flushedTotal := int64(0)
			for run := range 50 {
				id := "crash-" + strconv.Itoa(run/10) // a fresh session every 10 runs bounds the log
				flushed := runWriterUntilKilled(t, b.name, dir, id, time.Duration(10+rng.IntN(90))*time.Millisecond)
				if flushed > flushedTotal {
					flushedTotal = flushed
				}
				ctx := context.Background()
				t0 := time.Now()
				e, err := Start(ctx, crashConfig(b.name, b.conf(dir)), Options{Executable: logbookBin})
				if err != nil {
					t.Fatal(err)
				}
				s, rep, err := e.Store.Open(ctx, id)
				if err != nil {
					e.Close(ctx)
					t.Fatalf("run %d: open after kill: %v\nlocks held: %q", run, err, testserve.LockHolders(dir))
				}
				if int64(s.Len()) < flushed {
					e.Close(ctx)
					t.Fatalf("run %d: %d events after reopen, %d were flushed", run, s.Len(), flushed)
				}
				if closers := session.InterruptedTurnClosers(s.Events().Slice()); len(closers) != 0 {
					e.Close(ctx)
					t.Fatalf("run %d: Open left an open turn (%d closers due); report %+v", run, len(closers), rep)
				}
				if err := e.Close(ctx); err != nil {
					t.Fatalf("run %d: close: %v", run, err)
				}
				if run%10 == 0 {
					t.Logf("run %d: %d events, %d flushed, reopen took %v", run, s.Len(), flushed, time.Since(t0))
				}
			}
			if flushedTotal == 0 {
				t.Fatal("no writer ever flushed: the test proved nothing")
			}
		})
	}
}

// runWriterUntilKilled starts a writer, lets it run for about d after its
// first flush, kills it with SIGKILL and returns the last length it reported
// flushed.
func runWriterUntilKilled(t *testing.T, backend, dir, id string, d time.Duration) int64 {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOGBOOK_TEST_WRITER="+backend, "LOGBOOK_TEST_WRITER_DIR="+dir, "LOGBOOK_TEST_WRITER_BIN="+logbookBin, "LOGBOOK_TEST_WRITER_SESSION="+id)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var flushed int64
	var killAt <-chan time.Time
	deadline := time.After(60 * time.Second)
	for killAt == nil || flushed == 0 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("writer exited before it was killed")
			}
			if strings.HasPrefix(line, "error") {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("writer: %s\nlocks held: %q", line, testserve.LockHolders(dir))
			}
			if n, err := strconv.ParseInt(strings.TrimPrefix(line, "flushed "), 10, 64); err == nil {
				flushed = n
				if killAt == nil {
					killAt = time.After(d)
				}
			}
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatal("writer made no progress in 60 s")
		}
	}
	for {
		select {
		case line, ok := <-lines:
			if ok {
				if n, err := strconv.ParseInt(strings.TrimPrefix(line, "flushed "), 10, 64); err == nil {
					flushed = n
				}
				continue
			}
		case <-killAt:
		}
		break
	}
	kill9(t, cmd)
	if held := testserve.LockHolders(dir); held != nil {
		t.Fatalf("the killed writer and its plugins are gone, yet locks are held: %q", held)
	}
	for line := range lines { // what it printed before dying counts too
		if n, err := strconv.ParseInt(strings.TrimPrefix(line, "flushed "), 10, 64); err == nil {
			flushed = n
		}
	}
	return flushed
}

// kill9 kills the host process cmd runs with SIGKILL, reaps it and waits
// until its plugins, which the kernel kills with it (parent-death signal),
// are gone, so that their locks are released. The plugins are the host's
// children when it is killed, whichever the host started or restarted.
func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	plugins := testserve.Children(cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if err := testserve.WaitGone(plugins, 10*time.Second); err != nil {
		t.Fatalf("a plugin outlived its killed host: %v", err)
	}
}
