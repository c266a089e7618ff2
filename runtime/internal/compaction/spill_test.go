package compaction

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

func anaSpiller(t testing.TB, cfg config.Spill) (*Spiller, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	p, err := NewSpiller(cfg, hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn}))
	if err != nil {
		t.Fatal(err)
	}
	return p, &logs
}

func anaTextBlocks(texts ...string) json.RawMessage {
	parts := make([]string, len(texts))
	for i, s := range texts {
		parts[i] = anaText(s)
	}
	return json.RawMessage("[" + strings.Join(parts, ",") + "]")
}

// anaSpilledText returns the single text block of spilled content.
func anaSpilledText(t testing.TB, content json.RawMessage) string {
	t.Helper()
	var blocks []struct{ Type, Text string }
	if err := json.Unmarshal(content, &blocks); err != nil || len(blocks) != 1 || blocks[0].Type != "text" {
		t.Fatalf("content %s is not one text block (%v)", content, err)
	}
	return blocks[0].Text
}

func anaOutput(tool string, content json.RawMessage) ToolOutput {
	return ToolOutput{SessionID: "s1", ToolName: tool, CallID: "call-1", Content: content, SuggestedName: "bash output.log"}
}

func TestSpillSkips(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("x", 300)
	cases := []struct {
		name string
		cfg  config.Spill
		out  ToolOutput
	}{
		{"disabled", config.Spill{Root: root}, anaOutput("bash", anaTextBlocks(big))},
		{"exempt by default: read", config.Spill{MaxInlineBytes: 100, Root: root}, anaOutput("read", anaTextBlocks(big))},
		{"exempt by configuration", config.Spill{MaxInlineBytes: 100, Root: root, ExemptTools: []string{"bash"}}, anaOutput("bash", anaTextBlocks(big))},
		{"policy-substituted value", config.Spill{MaxInlineBytes: 100, Root: root}, func() ToolOutput {
			o := anaOutput("bash", anaTextBlocks(big))
			o.Substituted = true
			return o
		}()},
		{"not all text blocks", config.Spill{MaxInlineBytes: 100, Root: root}, anaOutput("bash", json.RawMessage(`[`+anaText(big)+`,{"type":"image","mediaType":"image/png","data":"AAAA"}]`))},
		{"exactly maxInlineBytes", config.Spill{MaxInlineBytes: 300, Root: root}, anaOutput("bash", anaTextBlocks(big))},
		{"joined with newlines, still within", config.Spill{MaxInlineBytes: 301, Root: root}, anaOutput("bash", anaTextBlocks(big[:150], big[:150]))},
	}
	for _, c := range cases {
		p, logs := anaSpiller(t, c.cfg)
		got := p.Apply(context.Background(), c.out)
		if got.Spilled || !bytes.Equal(got.Content, c.out.Content) || got.Artifact != (Artifact{}) || logs.Len() != 0 {
			t.Errorf("%s: %+v, logs %q", c.name, got, logs)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("skips wrote %d entries", len(entries))
	}
	// An empty non-nil list exempts nothing, not even read.
	p, logs := anaSpiller(t, config.Spill{MaxInlineBytes: 1000, Root: root, ExemptTools: []string{}})
	if !p.Apply(context.Background(), anaOutput("read", anaTextBlocks(strings.Repeat(big, 10)))).Spilled {
		t.Log(logs)
		t.Fatal("read was exempt with ExemptTools = []")
	}
}

func TestSpillHeadNoticeTail(t *testing.T) {
	root := t.TempDir()
	p, logs := anaSpiller(t, config.Spill{MaxInlineBytes: 400, Root: root})
	var whole strings.Builder
	for i := range 200 {
		whole.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	parts := []string{whole.String(), "second block"}
	got := p.Apply(context.Background(), anaOutput("bash", anaTextBlocks(parts...)))
	if !got.Spilled || logs.Len() != 0 {
		t.Fatalf("not spilled: %+v, logs %q", got, logs)
	}
	T := strings.Join(parts, "\n")

	// The artifact: the whole T, at <root>/session-<sha256(id)>/<16 hex>-<safeName>.
	sum := sha256.Sum256([]byte("s1"))
	dir := filepath.Join(root, "session-"+hex.EncodeToString(sum[:]))
	if filepath.Dir(got.Artifact.Locator) != dir || !filepath.IsAbs(got.Artifact.Locator) {
		t.Fatalf("locator %s not in %s", got.Artifact.Locator, dir)
	}
	if !regexp.MustCompile(`^[0-9a-f]{16}-bashoutput\.log$`).MatchString(filepath.Base(got.Artifact.Locator)) {
		t.Fatalf("file name %s", filepath.Base(got.Artifact.Locator))
	}
	saved, err := os.ReadFile(got.Artifact.Locator)
	if err != nil || string(saved) != T || got.Artifact.Bytes != int64(len(T)) || got.Artifact.RetrievalHint != RetrievalHint {
		t.Fatalf("artifact %+v holds %d bytes (%v), want %d", got.Artifact, len(saved), err, len(T))
	}
	anaRequireMode(t, dir, 0o700)
	anaRequireMode(t, got.Artifact.Locator, 0o600)

	// The text: head + "\n\n" + N(k) + "\n\n" + tail, with the exact arithmetic.
	notice := func(k int) string {
		return "(" + strconv.Itoa(k) + " bytes omitted. Full output saved at " + got.Artifact.Locator + ". Read it in ranges with offset/limit, or search it with grep.)"
	}
	budget := 400 - (len(notice(len(T))) + 4)
	head, tail := T[:(budget+1)/2], T[len(T)-budget/2:]
	want := head + "\n\n" + notice(len(T)-len(head)-len(tail)) + "\n\n" + tail
	text := anaSpilledText(t, got.Content)
	if text != want {
		t.Fatalf("text\n%q\nwant\n%q", text, want)
	}
	if len(text) > 400 {
		t.Fatalf("%d bytes > maxInlineBytes", len(text))
	}
}

func TestSpillCutsOnUTF8Boundaries(t *testing.T) {
	for _, maxInline := range []int64{400, 401, 402, 403, 404, 405, 410, 500} {
		p, _ := anaSpiller(t, config.Spill{MaxInlineBytes: maxInline, Root: t.TempDir()})
		T := strings.Repeat("日本🙂é", 100) // 1-, 3- and 4-byte runes
		got := p.Apply(context.Background(), anaOutput("bash", anaTextBlocks(T)))
		if !got.Spilled {
			t.Fatalf("max %d: not spilled", maxInline)
		}
		text := anaSpilledText(t, got.Content)
		head, rest, _ := strings.Cut(text, "\n\n(")
		i := strings.LastIndex(rest, ")\n\n")
		tail := rest[i+3:]
		k, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ' ')])
		notice := "(" + rest[:i+1]
		reserve := len("("+strconv.Itoa(len(T))) + len(notice) - len("("+strconv.Itoa(k)) + 4
		budget := int(maxInline) - reserve
		if !utf8.ValidString(head) || !utf8.ValidString(tail) || !strings.HasPrefix(T, head) || !strings.HasSuffix(T, tail) {
			t.Fatalf("max %d: head %q tail %q", maxInline, head, tail)
		}
		// Longest: one more rune would pass the half budget.
		_, next := utf8.DecodeRuneInString(T[len(head):])
		_, prev := utf8.DecodeLastRuneInString(T[:len(T)-len(tail)])
		if len(head) > (budget+1)/2 || len(head)+next <= (budget+1)/2 || len(tail) > budget/2 || len(tail)+prev <= budget/2 {
			t.Fatalf("max %d budget %d: head %d tail %d", maxInline, budget, len(head), len(tail))
		}
		if k != len(T)-len(head)-len(tail) || len(text) > int(maxInline) {
			t.Fatalf("max %d: k %d, text %d bytes", maxInline, k, len(text))
		}
	}
}

func TestSpillNoticeAloneWhenBudgetIsZero(t *testing.T) {
	root := t.TempDir()
	T := strings.Repeat("z", 1000)
	locatorLen := len(filepath.Join(root, "session-"+strings.Repeat("0", 64), strings.Repeat("0", 16)+"-output.txt"))
	noticeLen := len("(1000 bytes omitted. Full output saved at . "+RetrievalHint+")") + locatorLen
	for _, maxInline := range []int64{int64(noticeLen), int64(noticeLen + 4)} { // reserve−4 and reserve: budget 0
		p, logs := anaSpiller(t, config.Spill{MaxInlineBytes: maxInline, Root: root})
		out := anaOutput("bash", anaTextBlocks(T))
		out.SuggestedName = "%%%" // nothing allowed: output.txt
		got := p.Apply(context.Background(), out)
		text := anaSpilledText(t, got.Content)
		if !got.Spilled || text != "(1000 bytes omitted. Full output saved at "+got.Artifact.Locator+". "+RetrievalHint+")" || logs.Len() != 0 {
			t.Fatalf("max %d: %q, logs %q", maxInline, text, logs)
		}
	}
	// One byte less: the notice does not fit; the original stays, with a warning.
	p, logs := anaSpiller(t, config.Spill{MaxInlineBytes: int64(noticeLen - 1), Root: root})
	out := anaOutput("bash", anaTextBlocks(T))
	got := p.Apply(context.Background(), out)
	if got.Spilled || !bytes.Equal(got.Content, out.Content) || !strings.Contains(logs.String(), "exceeds maxInlineBytes") {
		t.Fatalf("%+v, logs %q", got, logs)
	}
}

func TestSpillFailuresKeepTheOriginal(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := anaTextBlocks(strings.Repeat("x", 500))
	cases := []struct {
		name string
		root string
		ctx  func() context.Context
		out  ToolOutput
		log  string
	}{
		{"store cannot create its directory", notADir, context.Background, anaOutput("bash", big), "IO_ERROR"},
		{"cancelled", t.TempDir(), func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, anaOutput("bash", big), "context canceled"},
		{"content is not JSON", t.TempDir(), context.Background, anaOutput("bash", json.RawMessage(`[{"type":"text"`)), "JSON_SYNTAX"},
		{"content is not an array", t.TempDir(), context.Background, anaOutput("bash", json.RawMessage(`{"type":"text","text":"x"}`)), "not an array"},
	}
	for _, c := range cases {
		p, logs := anaSpiller(t, config.Spill{MaxInlineBytes: 100, Root: c.root})
		got := p.Apply(c.ctx(), c.out)
		if got.Spilled || !bytes.Equal(got.Content, c.out.Content) {
			t.Errorf("%s: %+v", c.name, got)
		}
		if !strings.Contains(logs.String(), "[WARN]") || !strings.Contains(logs.String(), c.log) || !strings.Contains(logs.String(), "call=call-1") {
			t.Errorf("%s: logs %q", c.name, logs)
		}
	}
}

func TestSpillConfigInvalid(t *testing.T) {
	_, err := NewSpiller(config.Spill{MaxInlineBytes: -1, Root: t.TempDir()}, nil)
	anaRequireCode(t, err, sdk.CodeConfigInvalid, "-1")
	_, err = NewSpiller(config.Spill{MaxInlineBytes: 50000}, nil)
	anaRequireCode(t, err, sdk.CodeConfigInvalid, "root")
	p, err := NewSpiller(config.Spill{MaxInlineBytes: 10, Root: "relative/dir"}, nil)
	if err != nil || !filepath.IsAbs(p.store.root) {
		t.Fatalf("relative root: %v", err)
	}
}

// TestSpillForksShareLocators: a fork copies the tool/result that names the
// artifact; the file is neither copied nor moved, and both sessions read it.
func TestSpillForksShareLocators(t *testing.T) {
	root := t.TempDir()
	p, _ := anaSpiller(t, config.Spill{MaxInlineBytes: 200, Root: root})
	got := p.Apply(context.Background(), anaOutput("bash", anaTextBlocks(strings.Repeat("q", 1000))))
	parent := anaSession(t)
	anaAppend(t, parent, anaAsst("a0", anaAsstOpts{}, anaCall("call-1", "bash", "{}")),
		session.AppendInput{Type: session.TypeToolResult, SurfaceOp: anaAppendOp(), Data: json.RawMessage(
			`{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"call-1","content":` + string(got.Content) + `,"source":{"kind":"tool","callId":"call-1"}}}`)})
	seed, _, err := session.ForkSeed(parent.Events().Slice(), nil, 1_700_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(seed[1].Data(), []byte(got.Artifact.Locator)) {
		t.Fatal("the fork seed does not carry the locator")
	}
	var files int
	filepath.WalkDir(root, func(_ string, d os.DirEntry, _ error) error {
		if !d.IsDir() {
			files++
		}
		return nil
	})
	if files != 1 {
		t.Fatalf("%d artifact files after the fork, want the one shared file", files)
	}
}

func anaRequireMode(t testing.TB, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Fatalf("%s has mode %v, want %v", path, fi.Mode().Perm(), want)
	}
}
