package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/runtime/internal/pluginhost"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// parityBackend is one first-party backend under test: its bundled plugin
// name, its config for a directory, and its ServeConfig and in-process
// constructor.
type parityBackend struct {
	name, plugin string
	config       func(dir string) []byte
	serve        func() pluginrpc.ServeConfig
}

var parityBackends = []parityBackend{
	{"memory", "memory", func(string) []byte { return nil }, func() pluginrpc.ServeConfig {
		return pluginrpc.ServeConfig{
			Info:        sdk.Info{Name: "memory", Kinds: []sdk.Kind{sdk.KindPersistence}},
			Persistence: memory.New(),
		}
	}},
	{"jsonl-none", "jsonl", func(dir string) []byte {
		return mustJSON(map[string]any{"root": filepath.Join(dir, "jsonl-none"), "compression": "none"})
	}, func() pluginrpc.ServeConfig { return jsonl.ServeConfig("test") }},
	{"jsonl-zstd", "jsonl", func(dir string) []byte {
		return mustJSON(map[string]any{"root": filepath.Join(dir, "jsonl-zstd"), "compression": "zstd"})
	}, func() pluginrpc.ServeConfig { return jsonl.ServeConfig("test") }},
	{"sqlite", "sqlite", func(dir string) []byte {
		return mustJSON(map[string]any{"path": filepath.Join(dir, "sessions.db")})
	}, func() pluginrpc.ServeConfig { return sqlite.ServeConfig("test") }},
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// parityMode connects a backend: in process, over go-plugin's in-memory
// gRPC connection, or as a `logbook plugin <name>` subprocess.
type parityMode struct {
	name    string
	connect func(t *testing.T, b parityBackend, dir string) sdk.Persistence
}

var parityModes = []parityMode{
	{"in-process", func(t *testing.T, b parityBackend, dir string) sdk.Persistence {
		cfg := b.serve()
		if cfg.Configurable != nil {
			if err := cfg.Configurable.Configure(t.Context(), b.config(dir)); err != nil {
				t.Fatalf("configuring %s: %v", b.name, err)
			}
		}
		return cfg.Persistence
	}},
	{"grpc-in-memory", func(t *testing.T, b parityBackend, dir string) sdk.Persistence {
		c := plugintest.Connect(t, b.serve())
		if conf := b.config(dir); conf != nil {
			if err := c.Configure(t.Context(), conf); err != nil {
				t.Fatalf("configuring %s: %v", b.name, err)
			}
		}
		p, err := c.Persistence()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}},
	{"subprocess", func(t *testing.T, b parityBackend, dir string) sdk.Persistence {
		h, err := pluginhost.New(pluginhost.Options{Executable: logbookBin})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(h.Close)
		p, err := h.Start(t.Context(), pluginhost.Spec{Name: b.plugin, Config: b.config(dir)})
		if err != nil {
			t.Fatalf("starting `logbook plugin %s`: %v", b.plugin, err)
		}
		return p.Persistence()
	}},
}

// parityMaxEventBytes is the store's cap in the parity test: a value other
// than the default, so that events near it stay small, and so that a
// backend applying a size rule of its own would show.
const parityMaxEventBytes = 256 << 10

// TestBackendsAcceptWhatTheHostAccepts is the parity property: random
// append inputs (data of random depth up to and past the nesting limit,
// sizes near and past the event size cap, unicode and escapes, number
// literals of every form, whitespace) go to a session whose store mirrors
// to every first-party backend; whatever the host's Append accepts, every
// backend stores byte for byte, in every mode. What the host refuses for
// depth names the limit 512. The generator is seeded; the seed is logged.
func TestBackendsAcceptWhatTheHostAccepts(t *testing.T) {
	for mi, mode := range parityModes {
		t.Run(mode.name, func(t *testing.T) {
			seed := int64(20261201 + mi)
			t.Logf("seed %d", seed)
			runParity(t, mode, rand.New(rand.NewSource(seed)))
		})
	}
}

func runParity(t *testing.T, mode parityMode, r *rand.Rand) {
	ctx := t.Context()
	dir := t.TempDir()
	var backends []store.Backend
	for _, b := range parityBackends {
		backends = append(backends, store.Backend{Name: b.name, Persistence: mode.connect(t, b, dir)})
	}
	st, err := store.New(store.Options{Backends: backends, MaxEventBytes: parityMaxEventBytes, WriteWindow: time.Minute, RetryMaxBackoff: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	s, err := st.Create(ctx, store.CreateOptions{ID: "parity"})
	if err != nil {
		t.Fatal(err)
	}
	g := &jsonGen{r: r}
	accepted, deepest, refused := 0, 0, map[sdk.Code]int{}
	for batch := range 16 {
		for range 4 + r.Intn(16) {
			in, what := g.input(batch)
			before := s.Len()
			_, err := s.Append(ctx, in)
			switch {
			case err == nil:
				accepted++
				if what == atLimit {
					deepest++
				}
				continue
			case s.Len() != before:
				t.Fatalf("a refused append (%s) changed the log length from %d to %d", what, before, s.Len())
			}
			var e *sdk.Error
			if !errors.As(err, &e) {
				t.Fatalf("append of %s: %v is not an *sdk.Error", what, err)
			}
			refused[e.Code]++
			if e.Code == sdk.CodeJSONTooDeep && !strings.Contains(e.Detail, "deeper than 512 at") {
				t.Fatalf("the host's depth error for %s does not name the limit 512: %v", what, err)
			}
		}
		res, err := st.Flush(ctx, s)
		if err != nil {
			t.Fatalf("flush after batch %d: %v", batch, err)
		}
		for _, b := range res.Backends {
			if b.Err != nil || int64(b.DurableSeq) != int64(s.Len())-1 {
				t.Fatalf("batch %d: backend %s: durable %d of %d events, error %v", batch, b.Name, b.DurableSeq, s.Len(), b.Err)
			}
		}
	}
	t.Logf("%d events accepted and stored by every backend (%s: %d); refused by the host: %v", accepted, atLimit, deepest, refused)
	if accepted < 100 || deepest == 0 || refused[sdk.CodeJSONTooDeep] == 0 || refused[sdk.CodeEventTooLarge] == 0 {
		t.Fatalf("the generator covered too little: %d accepted (%s: %d), refused %v", accepted, atLimit, deepest, refused)
	}
	if err := st.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	want := make([][]byte, s.Len())
	for i := range want {
		ev, _ := s.Event(sdk.Seq(i))
		want[i] = ev.Envelope()
	}
	for _, b := range backends {
		got := readStored(t, b.Persistence, "parity")
		if len(got) != len(want) {
			t.Fatalf("%s stores %d events; the session has %d", b.Name, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s: event %d differs from the session's", b.Name, i)
			}
		}
	}
}

// atLimit describes an input whose data nests exactly as deep as allowed.
var atLimit = fmt.Sprintf("data %d deep", sdk.MaxJSONDepth)

// jsonGen writes random JSON text, valid or not, as a client might send.
type jsonGen struct {
	r *rand.Rand
	b []byte
}

// input returns a random append input and a short description of it.
func (g *jsonGen) input(batch int) (session.AppendInput, string) {
	typ := "x-parity/t" + strconv.Itoa(g.r.Intn(5))
	ignorable := true
	if g.r.Intn(8) == 0 {
		typ = "plugin:parity/rec" // a plugin record unknown to the host
	}
	g.b = g.b[:0]
	var what string
	switch k := g.r.Intn(10); {
	case k < 4:
		depth := g.depth()
		what = fmt.Sprintf("data %d deep", depth)
		g.nested(depth)
	case k < 6:
		target := parityMaxEventBytes - 64 - g.r.Intn(2048) + g.r.Intn(256)
		what = fmt.Sprintf("data of about %d bytes", target)
		g.large(target)
	case k < 7 && batch%3 == 0:
		// A core event: a turn boundary whose data the host checks.
		typ, ignorable = "turn/start", false
		g.b = fmt.Appendf(g.b, `{ "turn" : %d }`, batch)
		what = "turn/start"
	default:
		what = "a random value"
		g.value(1 + g.r.Intn(6))
	}
	return session.AppendInput{Type: typ, Data: append([]byte(nil), g.b...), Ignorable: ignorable}, what
}

// depth picks a nesting depth, often at or just past the limit.
func (g *jsonGen) depth() int {
	switch g.r.Intn(4) {
	case 0:
		return sdk.MaxJSONDepth
	case 1:
		return sdk.MaxJSONDepth + 1 + g.r.Intn(3)
	default:
		return 1 + g.r.Intn(sdk.MaxJSONDepth)
	}
}

// nested writes a value nested exactly depth containers deep (more when a
// scalar sibling happens to be a container: value never nests), with
// random containers, names and siblings along the way.
func (g *jsonGen) nested(depth int) {
	closers := make([]byte, 0, depth)
	for range depth {
		if g.r.Intn(2) == 0 {
			g.b = append(g.b, '[')
			if g.r.Intn(4) == 0 {
				g.scalar()
				g.b = append(g.b, ',')
			}
			closers = append(closers, ']')
		} else {
			g.b = append(g.b, '{')
			if g.r.Intn(4) == 0 {
				g.b = append(g.b, `"s":`...)
				g.scalar()
				g.b = append(g.b, ',')
			}
			g.b = append(g.b, `"n":`...)
			closers = append(closers, '}')
		}
	}
	g.scalar()
	for i := len(closers) - 1; i >= 0; i-- {
		g.b = append(g.b, closers[i])
	}
}

// large writes an object holding a string of random text sized so that the
// envelope lands near target bytes; part of the text is escaped, so the
// raw input is longer than its canonical form.
func (g *jsonGen) large(target int) {
	g.b = append(g.b, `{"text":"`...)
	escaped := g.r.Intn(2) == 0
	for n := 0; n < target; {
		switch c := g.r.Intn(10); {
		case escaped && c == 0:
			g.b = append(g.b, `\u0061`...) // one canonical byte
			n++
		case c < 2:
			g.b = append(g.b, "é😀"...)
			n += 6
		default:
			g.b = append(g.b, byte('a'+g.r.Intn(26)))
			n++
		}
	}
	g.b = append(g.b, `"}`...)
}

// value writes a random value at most depth containers deep.
func (g *jsonGen) value(depth int) {
	g.space()
	if depth <= 0 || g.r.Intn(3) == 0 {
		g.scalar()
		g.space()
		return
	}
	n := g.r.Intn(5)
	if g.r.Intn(2) == 0 {
		g.b = append(g.b, '[')
		for i := range n {
			if i > 0 {
				g.b = append(g.b, ',')
			}
			g.value(depth - 1)
		}
		g.b = append(g.b, ']')
	} else {
		g.b = append(g.b, '{')
		for i := range n {
			if i > 0 {
				g.b = append(g.b, ',')
			}
			g.str(true)
			g.b = append(g.b, ':')
			g.value(depth - 1)
		}
		g.b = append(g.b, '}')
	}
	g.space()
}

// space writes insignificant whitespace, sometimes.
func (g *jsonGen) space() {
	if g.r.Intn(4) == 0 {
		g.b = append(g.b, " \t\n\r"[:1+g.r.Intn(4)]...)
	}
}

// numbers are literals of every form: plain, kept as written, at the safe
// integer bound, underflowing; badNumbers are literals the host refuses
// (negative zero, overflow, an unsafe integer).
var (
	numbers = []string{
		"0", "7", "-12", "1.50", "1E3", "2e-5", "-0.25", "9007199254740991", "-9007199254740991",
		"9007199254740992.0", "1e-400", "123456789012345678901234567890.5", "0.000001",
	}
	badNumbers = []string{"-0", "-0.0", "1e400", "9007199254740992"}
)

// scalar writes a random scalar.
func (g *jsonGen) scalar() {
	switch g.r.Intn(6) {
	case 0:
		g.b = append(g.b, []string{"null", "true", "false"}[g.r.Intn(3)]...)
	case 1, 2:
		if g.r.Intn(100) == 0 {
			g.b = append(g.b, badNumbers[g.r.Intn(len(badNumbers))]...)
		} else {
			g.b = append(g.b, numbers[g.r.Intn(len(numbers))]...)
		}
	default:
		g.str(false)
	}
}

// pieces of string content: plain and non-ASCII text, characters the
// canonical form escapes or keeps, escapes of every kind, surrogate pairs,
// and rarely a lone surrogate the host refuses.
var pieces = []string{
	"a", "Zürich", "日本語", "😀", "\u2028", "\u2029", "/", `\/`, `\"`, `\\`, `\n`, `\t`, `\b`, `\f`, `\r`,
	`\u0000`, `\u001f`, `\u00e9`, `\ud83d\ude00`, `\u2028`, "\x7f", "\u00a0", "\ufeff", "a b",
}

// str writes a string; as a member name (key) it carries a random suffix so
// that names rarely collide (a collision the host refuses).
func (g *jsonGen) str(key bool) {
	g.b = append(g.b, '"')
	for range g.r.Intn(6) {
		g.b = append(g.b, pieces[g.r.Intn(len(pieces))]...)
	}
	if key {
		g.b = strconv.AppendInt(g.b, g.r.Int63n(1<<20), 36)
	}
	if g.r.Intn(1000) == 0 {
		g.b = append(g.b, `\ud800`...)
	}
	g.b = append(g.b, '"')
}
