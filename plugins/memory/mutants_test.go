package memory_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// A mutant is the memory backend behind a wrapper that breaks one rule of
// docs/plugins.md. TestSuiteCatchesBrokenBackends runs the conformance suite
// against each in a child process and requires the rule's subtest to fail:
// the suite must not pass a backend that breaks it.
type mutant struct {
	rule string // the subtest, "<Group>/<rule>", that must fail
	wrap func(b *memory.Backend) sdk.Persistence
}

var mutants = map[string]mutant{
	"swallows-seq-conflict": {"CAS/stale-firstSeq-is-SEQ_CONFLICT-and-changes-nothing", func(b *memory.Backend) sdk.Persistence {
		return &swallowConflict{b}
	}},
	"shares-read-buffers": {"RoundTrip/caller-and-reply-buffers-are-not-shared", func(b *memory.Backend) sdk.Persistence {
		return &sharedReads{Backend: b, cache: map[string][][]byte{}}
	}},
	"drops-the-last-event": {"RoundTrip/events-read-back-byte-equal", func(b *memory.Backend) sdk.Persistence {
		return &dropLast{b}
	}},
	"ignores-the-context": {"Context/ended-context-fails-every-call-but-close-and-changes-nothing", func(b *memory.Backend) sdk.Persistence {
		return &noContext{b}
	}},
	"moves-the-revision-on-open": {"Revision/reads-rejections-and-ownership-leave-it-unchanged", func(b *memory.Backend) sdk.Persistence {
		return &restlessRevision{Backend: b}
	}},
	"reports-ownership-as-io-error": {"Ownership/second-write-open-is-ALREADY_OWNED", func(b *memory.Backend) sdk.Persistence {
		return &ioOwnership{b}
	}},
}

const mutantEnv = "LOGBOOK_MEMORY_MUTANT"

func TestSuiteCatchesBrokenBackends(t *testing.T) {
	if name := os.Getenv(mutantEnv); name != "" {
		// The child: run the suite against one mutant; the parent reads
		// the verdict.
		m := mutants[name]
		persistencetest.Run(t, harness(mode{name, func(_ *testing.T, b *memory.Backend) sdk.Persistence { return m.wrap(b) }}))
		return
	}
	for name, m := range mutants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSuiteCatchesBrokenBackends$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), mutantEnv+"="+name)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite passed a backend that %s (err %v):\n%s", name, err, tail(out))
			}
			if want := "--- FAIL: TestSuiteCatchesBrokenBackends/" + m.rule; !strings.Contains(string(out), want) {
				t.Fatalf("the backend that %s did not fail %s:\n%s", name, m.rule, tail(out))
			}
		})
	}
}

func tail(out []byte) string {
	const n = 4000
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return string(out)
}

type swallowConflict struct{ *memory.Backend }

func (m *swallowConflict) Append(ctx context.Context, h string, first sdk.Seq, ev [][]byte) (sdk.Durable, error) {
	d, err := m.Backend.Append(ctx, h, first, ev)
	if errors.Is(err, sdk.CodeSeqConflict) {
		return d, nil
	}
	return d, err
}

// sharedReads answers a repeated full read of a handle with the buffers it
// handed out the first time.
type sharedReads struct {
	*memory.Backend
	mu    sync.Mutex
	cache map[string][][]byte
}

func (m *sharedReads) Read(ctx context.Context, h string, off sdk.Offset, n int64, fn func([][]byte) error) error {
	if off != 0 || n != -1 {
		return m.Backend.Read(ctx, h, off, n, fn)
	}
	m.mu.Lock()
	cached := m.cache[h]
	m.mu.Unlock()
	if cached != nil {
		return fn(cached)
	}
	var all [][]byte
	if err := m.Backend.Read(ctx, h, 0, -1, func(ev [][]byte) error { all = append(all, ev...); return nil }); err != nil {
		return err
	}
	m.mu.Lock()
	m.cache[h] = all
	m.mu.Unlock()
	return fn(all)
}

type dropLast struct{ *memory.Backend }

func (m *dropLast) Read(ctx context.Context, h string, off sdk.Offset, n int64, fn func([][]byte) error) error {
	var all [][]byte
	if err := m.Backend.Read(ctx, h, off, n, func(ev [][]byte) error { all = append(all, ev...); return nil }); err != nil {
		return err
	}
	if len(all) > 1 {
		all = all[:len(all)-1]
	}
	return fn(all)
}

type noContext struct{ *memory.Backend }

func (m *noContext) Create(_ context.Context, h sdk.Header) (sdk.Opened, error) {
	return m.Backend.Create(context.Background(), h)
}

func (m *noContext) Append(_ context.Context, h string, first sdk.Seq, ev [][]byte) (sdk.Durable, error) {
	return m.Backend.Append(context.Background(), h, first, ev)
}

// restlessRevision gives every Open a revision of its own.
type restlessRevision struct {
	*memory.Backend
	mu sync.Mutex
	n  int
}

func (m *restlessRevision) Open(ctx context.Context, id string, a sdk.Access) (sdk.Opened, error) {
	o, err := m.Backend.Open(ctx, id, a)
	m.mu.Lock()
	m.n++
	o.Revision += "~" + string(rune('a'+m.n%26))
	m.mu.Unlock()
	return o, err
}

type ioOwnership struct{ *memory.Backend }

func (m *ioOwnership) Open(ctx context.Context, id string, a sdk.Access) (sdk.Opened, error) {
	o, err := m.Backend.Open(ctx, id, a)
	if errors.Is(err, sdk.CodeAlreadyOwned) {
		err = sdk.Errorf(sdk.CodeIOError, "mutant", "could not lock session %q", id)
	}
	return o, err
}
