package pruner

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

func TestMarkerChars(t *testing.T) {
	if n := utf8.RuneCountInString(Marker); n != MarkerChars || MarkerChars != config.PruneMarkerCodePoints {
		t.Fatalf("cp(Marker) = %d; MarkerChars = %d, config.PruneMarkerCodePoints = %d", n, MarkerChars, config.PruneMarkerCodePoints)
	}
	if !strings.Contains(Marker, "middle of tool output removed") {
		t.Fatalf("the marker must say the middle of the tool output was removed: %q", Marker)
	}
	if got := string(jsonv.AppendString(nil, Marker)); got != `"`+markerBody+`"` {
		t.Fatalf("markerBody %s is not the canonical encoding %s of the marker", markerBody, got)
	}
	if b := DefaultBudget(); b != budget(8192, 4096, 1024) || ValidateBudget(b) != nil {
		t.Fatalf("DefaultBudget() = %+v", b)
	}
}

// TestPruneAlgorithm checks docs/compaction.md case by case; the budget is 50 / 3 /
// 4 unless a case says otherwise (3 + 43 + 4 = 50: the tightest budget).
func TestPruneAlgorithm(t *testing.T) {
	m := strings.Repeat
	tight := budget(50, 3, 4)
	cases := []struct {
		name   string
		blocks []string
		budget sdk.PruneBudget
		want   []string // the expected content blocks; nil = no replacement
		before int64
	}{
		{
			name:   "exactly at the threshold: no replacement",
			blocks: []string{text(m("a", 50))},
			budget: tight,
		},
		{
			name:   "one code point over the threshold",
			blocks: []string{text("abc" + m("x", 44) + "WXYZ")},
			budget: tight,
			want:   []string{text("abc" + Marker + "WXYZ")},
			before: 51,
		},
		{
			name:   "threshold counts text blocks only",
			blocks: []string{text(m("a", 25)), image, pluginBlock, text(m("b", 25))},
			budget: tight,
		},
		{
			name:   "no text blocks",
			blocks: []string{image, pluginBlock},
			budget: budget(43, 0, 0),
		},
		{
			name:   "cut inside one block of several; blocks before and after untouched",
			blocks: []string{text("abc"), text(m("m", 59) + "Z"), text("xyz")},
			budget: tight,
			want:   []string{text("abc"), text(Marker + "Z"), text("xyz")},
			before: 66,
		},
		{
			name:   "cut spanning blocks drops the emptied middle block",
			blocks: []string{text("abcdefghij"), text(m("m", 40)), text("ABCDEFGHIJ")},
			budget: tight,
			want:   []string{text("abc" + Marker), text("GHIJ")},
			before: 60,
		},
		{
			name:   "non-text blocks between stay in place",
			blocks: []string{text("abc" + m("x", 27)), image, text(m("y", 26) + "WXYZ")},
			budget: tight,
			want:   []string{text("abc" + Marker), image, text("WXYZ")},
			before: 60,
		},
		{
			name:   "non-text blocks inside the cut stay in place",
			blocks: []string{text("abcdefghij"), image, text(m("m", 40)), pluginBlock, text("ABCDEFGHIJ")},
			budget: tight,
			want:   []string{text("abc" + Marker), image, pluginBlock, text("GHIJ")},
			before: 60,
		},
		{
			name:   "astral and accented code points count once each",
			blocks: []string{text("😀😁😂" + m("é", 50) + "𝄞𝄞𝄞𝄞")},
			budget: tight,
			want:   []string{text("😀😁😂" + Marker + "𝄞𝄞𝄞𝄞")},
			before: 57,
		},
		{
			name:   "astral text within the threshold in code points, not bytes",
			blocks: []string{text(m("😀", 50))},
			budget: tight,
		},
		{
			name:   "cut ends between astral characters",
			blocks: []string{text("ab😀" + m("z", 40)), text("😀😁" + m("q", 6) + "🎉𝄞😀🎉")},
			budget: tight,
			want:   []string{text("ab😀" + Marker), text("🎉𝄞😀🎉")},
			before: 55,
		},
		{
			name:   "zero head and tail leave only the marker",
			blocks: []string{text("hello"), image, text(m("w", 40))},
			budget: budget(43, 0, 0),
			want:   []string{text(Marker), image},
			before: 45,
		},
		{
			name:   "zero head: the marker opens the first block",
			blocks: []string{text(m("a", 46) + "ghij")},
			budget: budget(47, 0, 4),
			want:   []string{text(Marker + "ghij")},
			before: 50,
		},
		{
			name:   "zero tail: the marker closes the last kept text",
			blocks: []string{text("abc" + m("z", 10)), text(m("z", 37))},
			budget: budget(46, 3, 0),
			want:   []string{text("abc" + Marker)},
			before: 50,
		},
		{
			name:   "head ends exactly at a block boundary",
			blocks: []string{text("abc"), text(m("m", 50)), text("wxyz")},
			budget: tight,
			want:   []string{text("abc"), text(Marker), text("wxyz")},
			before: 57,
		},
		{
			name:   "empty text blocks outside the cut stay, inside it go",
			blocks: []string{text(""), text("abc" + m("x", 27)), text(""), text(m("y", 26) + "WXYZ"), text("")},
			budget: tight,
			want:   []string{text(""), text("abc" + Marker), text("WXYZ"), text("")},
			before: 60,
		},
		{
			name:   "other members of a shortened text block keep their order",
			blocks: []string{`{"text":` + strconv.Quote("abc"+m("x", 50)+"WXYZ") + `,"plugin:acme/lang":"go","type":"text"}`},
			budget: tight,
			want:   []string{`{"text":"abc\n\n[... middle of tool output removed ...]\n\nWXYZ","plugin:acme/lang":"go","type":"text"}`},
			before: 57,
		},
		{
			name:   "escapes are re-encoded canonically",
			blocks: []string{text("a\"\\" + m("\x01", 50) + "\t\n\u2028/")},
			budget: tight,
			want:   []string{text("a\"\\" + Marker + "\t\n\u2028/")},
			before: 57,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := message(c.blocks...)
			r, ok, err := PruneMessage(msg, c.budget)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if ok || r.Content != nil {
					t.Fatalf("want no replacement; got %s", r.Content)
				}
				return
			}
			if !ok {
				t.Fatal("no replacement")
			}
			if got, want := string(r.Content), content(c.want...); got != want {
				t.Fatalf("content\n got %s\nwant %s", got, want)
			}
			after := c.budget.HeadChars + MarkerChars + c.budget.TailChars
			if r.CharsBefore != c.before || r.CharsAfter != after {
				t.Fatalf("chars before/after = %d/%d; want %d/%d", r.CharsBefore, r.CharsAfter, c.before, after)
			}
			if n, _, _ := textChars(t, r.Content); n != r.CharsAfter {
				t.Fatalf("the content holds %d text code points; CharsAfter = %d", n, r.CharsAfter)
			}
			if _, again, err := PruneMessage(withContent(t, msg, r.Content), c.budget); again || err != nil {
				t.Fatalf("second run: replacement %v, error %v", again, err)
			}
		})
	}
}

// TestPruneUntouchedBlocksByteIdentical feeds blocks that are canonical
// but unusual (key order, numbers, nested values, escapes) and checks they
// come out byte for byte.
func TestPruneUntouchedBlocksByteIdentical(t *testing.T) {
	odd := []string{
		`{"data":"AAAA","type":"image","mediaType":"image/png"}`,
		`{"type":"plugin:x/y","n":1.50,"big":9007199254740991,"e":1E+40,"s":"\u001fé","a":[{},[],null,true]}`,
		`{"type":"text","text":"short \"quoted\" \\ text","plugin:meta":{"k":[1,2]}}`,
	}
	blocks := []string{odd[0], odd[1], odd[2], text(strings.Repeat("x", 200))}
	r, ok, err := PruneMessage(message(blocks...), budget(100, 30, 4))
	if err != nil || !ok {
		t.Fatalf("PruneMessage = %v, %v", ok, err)
	}
	want := content(odd[0], odd[1], odd[2], text(strings.Repeat("x", 9)+Marker+"xxxx"))
	if string(r.Content) != want {
		t.Fatalf("content\n got %s\nwant %s", r.Content, want)
	}
}

// TestPruneBudgetInvalid: one case per rule of the budget; each is
// CONFIG_INVALID naming the values, before the message is read.
func TestPruneBudgetInvalid(t *testing.T) {
	cases := []struct {
		name string
		b    sdk.PruneBudget
		want []string
	}{
		{"negative threshold", budget(-1, 0, 0), []string{"thresholdChars -1"}},
		{"negative head", budget(8192, -5, 1024), []string{"headChars -5"}},
		{"negative tail", budget(8192, 4096, -7), []string{"tailChars -7"}},
		{"head + marker + tail one over", budget(50, 4, 4), []string{"headChars 4", "tailChars 4", "thresholdChars 50"}},
		{"threshold below the marker", budget(42, 0, 0), []string{"thresholdChars 42"}},
		{"zero budget", budget(0, 0, 0), []string{"thresholdChars 0"}},
		{"sum overflows int64", budget(math.MaxInt64, math.MaxInt64, math.MaxInt64), []string{strconv.FormatInt(math.MaxInt64, 10)}},
		{"tail alone too large", budget(100, 0, math.MaxInt64-10), []string{"tailChars " + strconv.FormatInt(math.MaxInt64-10, 10)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requireCode(t, ValidateBudget(c.b), sdk.CodeConfigInvalid, c.want...)
			r, ok, err := PruneMessage([]byte("not even JSON"), c.b)
			requireCode(t, err, sdk.CodeConfigInvalid, c.want...)
			if ok || r.Content != nil {
				t.Fatalf("a refused budget returned a replacement: %s", r.Content)
			}
			reps, err := Pruner{}.Prune(t.Context(), "s1", []sdk.PruneNode{{Seq: 3, Message: message(text(strings.Repeat("x", 9000)))}}, c.b)
			e := requireCode(t, err, sdk.CodeConfigInvalid, c.want...)
			if e.SessionID != "s1" || e.Seq != nil || reps != nil {
				t.Fatalf("Prune error %+v, replacements %v", e, reps)
			}
		})
	}
	for _, ok := range []sdk.PruneBudget{budget(43, 0, 0), budget(50, 3, 4), budget(math.MaxInt64, 0, math.MaxInt64-43)} {
		if err := ValidateBudget(ok); err != nil {
			t.Errorf("ValidateBudget(%+v) = %v", ok, err)
		}
	}
}

// TestPruneMessageInvalid: a message the pruner cannot read is
// PAYLOAD_INVALID; through Prune it names the session and the node's seq.
func TestPruneMessageInvalid(t *testing.T) {
	cases := []struct {
		name string
		msg  string
		want string
	}{
		{"not JSON", `{"content":[`, "not valid JSON"},
		{"duplicate member", `{"content":[],"content":[]}`, "not valid JSON"},
		{"no content", `{"id":"m","role":"tool"}`, "no content array"},
		{"content not an array", `{"content":"text"}`, "no content array"},
		{"block not an object", `{"content":["text"]}`, "content block 0"},
		{"block without a type", `{"content":[{"type":"text","text":"a"},{"text":"b"}]}`, "content block 1"},
		{"text not a string", `{"content":[{"type":"text","text":7}]}`, "text block 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ok, err := PruneMessage([]byte(c.msg), DefaultBudget())
			requireCode(t, err, sdk.CodePayloadInvalid, c.want)
			if ok {
				t.Fatal("replacement for an invalid message")
			}
			nodes := []sdk.PruneNode{{Seq: 4, Message: message(text(strings.Repeat("x", 9000)))}, {Seq: 9, Message: []byte(c.msg)}}
			reps, err := Pruner{}.Prune(t.Context(), "s2", nodes, DefaultBudget())
			e := requireCode(t, err, sdk.CodePayloadInvalid, c.want, `session "s2"`, "seq 9")
			if e.SessionID != "s2" || (e.Seq == nil || *e.Seq != 9) || reps != nil {
				t.Fatalf("Prune error %+v, replacements %v", e, reps)
			}
		})
	}
}

// TestPruneCancelled: a context that ended stops Prune between nodes.
func TestPruneCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Pruner{}.Prune(ctx, "s3", []sdk.PruneNode{{Seq: 1, Message: message(text("x"))}}, DefaultBudget())
	requireCode(t, err, sdk.CodeCompactionCancelled, `session "s3"`)
}

// TestPruneIdempotentProperty prunes random tool results under random
// valid budgets and checks every rule of docs/compaction.md on the result: the text
// length, the kept head and tail, the non-text blocks in order, and that a
// second run returns no replacement.
func TestPruneIdempotentProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 2))
	alphabet := []rune("ab \n\"\\é😀𝄞\u0000\u2028")
	for i := range 2000 {
		b := budget(0, int64(rng.IntN(40)), int64(rng.IntN(40)))
		b.ThresholdChars = b.HeadChars + MarkerChars + b.TailChars + int64(rng.IntN(30))
		var blocks []string
		var texts []string
		var others []string
		for range rng.IntN(6) + 1 {
			switch rng.IntN(5) {
			case 0:
				blocks = append(blocks, image)
				others = append(others, image)
			case 1:
				p := `{"type":"plugin:p/q","i":` + strconv.Itoa(len(blocks)) + `}`
				blocks = append(blocks, p)
				others = append(others, p)
			default:
				rs := make([]rune, rng.IntN(80)+rng.IntN(2)*rng.IntN(400))
				for j := range rs {
					rs[j] = alphabet[rng.IntN(len(alphabet))]
				}
				blocks = append(blocks, text(string(rs)))
				texts = append(texts, string(rs))
			}
		}
		msg := message(blocks...)
		all := []rune(strings.Join(texts, ""))
		r, ok, err := PruneMessage(msg, b)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if ok != (int64(len(all)) > b.ThresholdChars) {
			t.Fatalf("case %d: replacement %v for %d text code points, threshold %d", i, ok, len(all), b.ThresholdChars)
		}
		if !ok {
			continue
		}
		n, gotTexts, gotOthers := textChars(t, r.Content)
		joined := []rune(strings.Join(gotTexts, ""))
		want := string(all[:b.HeadChars]) + Marker + string(all[int64(len(all))-b.TailChars:])
		switch {
		case r.CharsBefore != int64(len(all)) || r.CharsAfter != n || n != b.HeadChars+MarkerChars+b.TailChars:
			t.Fatalf("case %d: chars %d → %d, content has %d", i, r.CharsBefore, r.CharsAfter, n)
		case string(joined) != want:
			t.Fatalf("case %d: text %q; want %q", i, string(joined), want)
		case !slices.Equal(gotOthers, others):
			t.Fatalf("case %d: non-text blocks %v; want %v", i, gotOthers, others)
		case slices.Contains(gotTexts, "") && !slices.Contains(texts, ""):
			t.Fatalf("case %d: an emptied text block was kept: %q", i, gotTexts)
		}
		if _, again, err := PruneMessage(withContent(t, msg, r.Content), b); again || err != nil {
			t.Fatalf("case %d: second run: replacement %v, error %v", i, again, err)
		}
	}
}

func BenchmarkPruneMessage(b *testing.B) {
	msg := message(text(strings.Repeat("line of tool output 😀\n", 4000)), image, text(strings.Repeat("tail\n", 100)))
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, ok, err := PruneMessage(msg, DefaultBudget()); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
