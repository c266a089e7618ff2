package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// userMsg, assistantMsg and toolResult are the data of message events.
func userMsg(text string) string {
	return `{"id":"u","role":"user","content":[{"type":"text","text":` + quote(text) + `}],"source":{"kind":"prompt"}}`
}

func assistantMsg(text, tool, args string) string {
	return `{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[{"type":"text","text":` + quote(text) +
		`},{"type":"tool-call","id":"c1","name":` + quote(tool) + `,"arguments":` + quote(args) + `}]}}`
}

func toolResult(text string) string {
	return `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"c1","content":[{"type":"text","text":` + quote(text) + `}]}}`
}

func quote(s string) string {
	return string(jsonv.AppendString(nil, s))
}

// event is one stored event of a test session.
type event struct{ typ, data string }

// storeSession stores a materialized session id created at createdAt
// holding evs.
func storeSession(t testing.TB, p sdk.Persistence, id string, createdAt int64, evs ...event) {
	t.Helper()
	ctx := context.Background()
	o, err := p.Create(ctx, sdk.Header{FormatVersion: sdk.FormatVersion, ID: id, CreatedAt: createdAt, CWD: "/work"})
	if err != nil {
		t.Fatal(err)
	}
	var envs [][]byte
	for i, e := range evs {
		envs = append(envs, persistencetest.Envelope(i, e.typ, e.data))
	}
	if len(envs) > 0 {
		if _, err := p.Append(ctx, o.Handle, 0, envs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Flush(ctx, o.Handle); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx, o.Handle); err != nil {
		t.Fatal(err)
	}
}

// backends are the persistence backends the tests run against.
func backends(t *testing.T) map[string]sdk.Persistence {
	j, err := jsonl.New(jsonl.Config{Root: t.TempDir(), Compression: jsonl.CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]sdk.Persistence{"memory": memory.New(), "jsonl": j}
}

// fixture stores three sessions: old (created first), new and quiet.
func fixture(t *testing.T, p sdk.Persistence) {
	storeSession(t, p, "old", 1000,
		event{"turn/start", `{"turn":1}`},
		event{"user/message", userMsg("Please list the Go files")},
		event{"assistant/message", assistantMsg("Listing the go files.", "ls", `{"glob":"*.go"}`)},
		event{"tool/result", toolResult("a.go\nb.go\n" + strings.Repeat("padding ", 40) + "main.GO")},
	)
	storeSession(t, p, "new", 3000,
		event{"user/message", userMsg(`say "hi" to GO`)},
		event{"todo/write", `{"todos":[{"content":"go","status":"pending"}]}`},
	)
	storeSession(t, p, "quiet", 2000, event{"user/message", userMsg("nothing here")})
}

// collect runs Scan and returns its hits as "session/seq" strings.
func collect(t *testing.T, p sdk.Persistence, q Query) ([]Hit, []string, Stats) {
	t.Helper()
	var hits []Hit
	var keys []string
	st, err := Scan(context.Background(), p, q, func(h Hit) error {
		hits = append(hits, h)
		keys = append(keys, fmt.Sprintf("%s/%d", h.Session, h.Seq))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits, keys, st
}

// TestScanRules: newest session first, latest event first; ASCII letters
// in either case unless CaseSensitive; only the message text counts (not
// ids, not other event types); Types and Limit narrow the hits; text that
// JSON escapes is found.
func TestScanRules(t *testing.T) {
	for name, p := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fixture(t, p)
			for _, tc := range []struct {
				name string
				q    Query
				want string
			}{
				{"newest first, either case", Query{Text: "go"}, "new/0 old/3 old/2 old/1"},
				{"case-sensitive", Query{Text: "GO", CaseSensitive: true}, "new/0 old/3"},
				{"tool-call arguments", Query{Text: "*.go"}, "old/2"},
				{"one type", Query{Text: "go", Types: []string{"tool/result", "user/message"}}, "new/0 old/3 old/1"},
				{"one session", Query{Text: "go", Session: "old"}, "old/3 old/2 old/1"},
				{"limit", Query{Text: "go", Limit: 2}, "new/0 old/3"},
				{"escaped text", Query{Text: `"hi"`}, "new/0"},
				{"a newline", Query{Text: "a.go\nb"}, "old/3"},
				{"an id is not text", Query{Text: `"u"`}, ""},
				{"no match", Query{Text: "rust"}, ""},
			} {
				_, keys, _ := collect(t, p, tc.q)
				if got := strings.Join(keys, " "); got != tc.want {
					t.Errorf("%s: hits %q, want %q", tc.name, got, tc.want)
				}
			}
			hits, _, st := collect(t, p, Query{Text: "main.go"})
			if len(hits) != 1 || !strings.HasPrefix(hits[0].Snippet, "…") || !strings.HasSuffix(hits[0].Snippet, "padding main.GO") || strings.Contains(hits[0].Snippet, "\n") {
				t.Errorf("snippet of a long text: %+v", hits)
			}
			if hits[0].Type != "tool/result" || hits[0].Time != persistencetest.BaseTime+3 {
				t.Errorf("hit: %+v", hits[0])
			}
			if st.Sessions != 3 || st.Events != 7 || st.Bytes == 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestScanRefusesBadQueries: one USAGE per broken rule, and an unknown
// session is SESSION_NOT_FOUND; fn is never called.
func TestScanRefusesBadQueries(t *testing.T) {
	p := memory.New()
	fixture(t, p)
	for _, tc := range []struct {
		q      Query
		code   sdk.Code
		detail string
	}{
		{Query{}, sdk.CodeUsage, "the search text is empty"},
		{Query{Text: "x", Limit: -1}, sdk.CodeUsage, "must not be negative"},
		{Query{Text: "x", Types: []string{"todo/write"}}, sdk.CodeUsage, `unknown type "todo/write"; a search reports user/message, assistant/message, tool/result`},
		{Query{Text: "x", Session: "absent"}, sdk.CodeSessionNotFound, ""},
	} {
		_, err := Scan(context.Background(), p, tc.q, func(Hit) error { t.Fatal("fn called"); return nil })
		var e *sdk.Error
		if !errors.As(err, &e) || e.Code != tc.code || !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("%+v: %v, want %s %q", tc.q, err, tc.code, tc.detail)
		}
	}
}

// TestScanStopsWhenFnFails: fn's error ends the scan and is returned.
func TestScanStopsWhenFnFails(t *testing.T) {
	p := memory.New()
	fixture(t, p)
	stop := errors.New("stop")
	calls := 0
	_, err := Scan(context.Background(), p, Query{Text: "go", Workers: 1}, func(Hit) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Scan: %v after %d calls", err, calls)
	}
}

// TestLowerASCII: every byte value, at every offset of a word, is folded
// as the byte rule says.
func TestLowerASCII(t *testing.T) {
	src := make([]byte, 0, 256+7)
	for c := range 256 {
		src = append(src, byte(c))
	}
	for off := range 8 {
		in := append(make([]byte, off), src...)
		got := lowerASCII([]byte("p"), in)
		for i, c := range in {
			want := c
			if 'A' <= c && c <= 'Z' {
				want += 'a' - 'A'
			}
			if got[1+i] != want {
				t.Fatalf("offset %d: byte %#x folded to %#x, want %#x", off, c, got[1+i], want)
			}
		}
		if got[0] != 'p' {
			t.Fatal("dst prefix changed")
		}
	}
}
