package jsonl

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestEncodeIDExamples(t *testing.T) {
	cases := []struct{ id, want string }{
		{"s1", "s1"},
		{"0192b7e2-7c1e-7a4b-9f00-1234567890ab", "0192b7e2-7c1e-7a4b-9f00-1234567890ab"},
		{"a_b.c-d", "a_b.c-d"},
		{"Session", "~53ession"},
		{".hidden", "~2Ehidden"},
		{"..", "~2E."},
		{"../etc/passwd", "~2E.~2Fetc~2Fpasswd"},
		{`a\b`, "a~5Cb"},
		{"~41", "~7E41"},
		{"a b", "a~20b"},
		{"é", "~C3~A9"},
		{"Z~z", "~5A~7Ez"},
	}
	for _, c := range cases {
		if got := EncodeID(c.id); got != c.want {
			t.Errorf("EncodeID(%q) = %q; want %q", c.id, got, c.want)
		}
		if back, ok := DecodeID(c.want); !ok || back != c.id {
			t.Errorf("DecodeID(%q) = %q, %t; want %q", c.want, back, ok, c.id)
		}
	}
	if n := len(EncodeID(strings.Repeat("\u00e9", 40))); n != 240 {
		t.Errorf("an 80-byte id of 2-byte runes encodes to %d bytes; want 240", n)
	}
}

// randomID draws a valid session id (docs/architecture.md) from an alphabet dense in
// near-collisions: both cases of a few letters, '.', '~', separators,
// hex digits and multi-byte runes.
func randomID(r *rand.Rand) string {
	const alphabet = "aAbBfF09._-~/\\ é€%"
	runes := []rune(alphabet)
	n := 1 + r.IntN(12)
	var b strings.Builder
	for b.Len() < n {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	s := b.String()
	for len(s) > 80 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// TestEncodeIDProperties checks, over random ids, that enc is traversal-free
// (only [a-z0-9_.~A-F-], no leading '.', never "." or ".."), injective,
// inverted by DecodeID, and collision-free under ASCII case folding.
func TestEncodeIDProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	byFolded := map[string]string{}
	for range 200_000 {
		id := randomID(r)
		if sdk.ValidateSessionID(id) != nil {
			continue
		}
		enc := EncodeID(id)
		if enc == "" || enc == "." || enc == ".." || enc[0] == '.' || len(enc) > 3*len(id) {
			t.Fatalf("EncodeID(%q) = %q", id, enc)
		}
		for i := 0; i < len(enc); i++ {
			c := enc[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '~' || c >= 'A' && c <= 'F') {
				t.Fatalf("EncodeID(%q) = %q holds byte %q", id, enc, c)
			}
		}
		if back, ok := DecodeID(enc); !ok || back != id {
			t.Fatalf("DecodeID(EncodeID(%q)) = %q, %t", id, back, ok)
		}
		folded := strings.ToLower(enc)
		if other, dup := byFolded[folded]; dup && other != id {
			t.Fatalf("ids %q and %q encode to %q and %q, equal under case folding", id, other, enc, EncodeID(other))
		}
		byFolded[folded] = id
	}
	if len(byFolded) < 50_000 {
		t.Fatalf("only %d distinct ids drawn", len(byFolded))
	}
}

func TestDecodeIDRefusesForeignNames(t *testing.T) {
	for _, name := range []string{"", ".x", "~61", "~2e", "~4", "~G0", "A", "x/y", "s1~", "~2Fok~"} {
		if id, ok := DecodeID(name); ok {
			t.Errorf("DecodeID(%q) = %q; want it refused", name, id)
		}
	}
}
