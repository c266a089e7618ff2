package jsonv

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalEncoding(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"order and literals kept", `{"b":1,"a":1.50}`, `{"b":1,"a":1.50}`},
		{"literals byte for byte", `[1E3, 1e+3, -0.5e-7, 9007199254740992.0, 0.10]`, `[1E3,1e+3,-0.5e-7,9007199254740992.0,0.10]`},
		{"whitespace removed", " {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\" : { } , \"c\" : [ ] } ", `{"a":[1,2],"b":{},"c":[]}`},
		{"scalars", ` true `, `true`},
		{"short escapes kept", `"\" \\ \b \t \n \f \r"`, `"\" \\ \b \t \n \f \r"`},
		{"hex escapes to short", `"\u0022\u005c\u0008\u0009\u000a\u000c\u000d"`, `"\"\\\b\t\n\f\r"`},
		{"other controls lowercase hex", `"\u0000\u001F\u001b\u0007"`, `"\u0000\u001f\u001b\u0007"`},
		{"solidus unescaped", `"a\/b</script>"`, `"a/b</script>"`},
		{"no HTML escaping", `"\u003c\u003e\u0026"`, `"<>&"`},
		{"line separators literal", `"\u2028\u2029"`, "\"\u2028\u2029\""},
		{"non-ASCII literal", `"\u00e9\u4e2d\ud83d\ude00"`, `"é中😀"`},
		{"raw non-ASCII kept", `"é中😀"`, `"é中😀"`},
		{"DEL literal", "\"\u007f\\u007f\"", "\"\x7f\x7f\""},
		{"ASCII escapes decoded", `"\u0041\u0062"`, `"Ab"`},
		{"names too", `{"\u0041":1, "\/":2}`, `{"A":1,"/":2}`},
		{"long run", `"` + strings.Repeat("abcdefgh", 20) + `\n"`, `"` + strings.Repeat("abcdefgh", 20) + `\n"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse([]byte(c.src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := d.Root().Bytes()
			if string(got) != c.want {
				t.Fatalf("canonical %q, want %q", got, c.want)
			}
			// Idempotent.
			d2, err := Parse(got, Options{})
			if err != nil || !bytes.Equal(d2.Root().Bytes(), got) {
				t.Fatalf("re-parse: %v %q", err, d2.Root().Bytes())
			}
			// Never longer than the input.
			if len(got) > len(c.src) {
				t.Errorf("canonical longer than input")
			}
		})
	}
}

// TestAppendStringMatchesParse checks AppendString against the canonical
// encoding Parse produces for the same string, over every character class.
func TestAppendStringMatchesParse(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x300; r++ {
		all.WriteRune(r)
	}
	for _, s := range []string{"", "plain", "\"\\/", "\u2028\u2029<>&", "😀 é 中", "\x00\x1f\x7f", all.String()} {
		enc := AppendString([]byte("x"), s)
		if enc[0] != 'x' {
			t.Fatalf("prefix lost")
		}
		enc = enc[1:]
		var viaJSON []byte
		viaJSON, _ = json.Marshal(s)
		d, err := Parse(viaJSON, Options{})
		if err != nil {
			t.Fatalf("Parse(%q): %v", viaJSON, err)
		}
		if got := d.Root().Bytes(); !bytes.Equal(got, enc) {
			t.Errorf("AppendString(%q) = %q, Parse canonical %q", s, enc, got)
		}
		if v, _ := d.Root().Str(); v != s {
			t.Errorf("Str() = %q, want %q", v, s)
		}
	}
	if got := string(AppendString(nil, "a\xffb")); got != "\"a\uFFFDb\"" {
		t.Errorf("invalid UTF-8: %q", got)
	}
	if got := string(AppendString(nil, "\n\"x")); got != `"\n\"x"` {
		t.Errorf("got %q", got)
	}
}

// TestAppendStringArrayIsCanonical checks AppendStringArray against the
// canonical encoding Parse produces for the same list written by
// encoding/json (which escapes <, >, & and U+2028), and that it parses back
// to the list.
func TestAppendStringArrayIsCanonical(t *testing.T) {
	for _, ss := range [][]string{nil, {""}, {"c1"}, {"c1", "a<b>&c\u2028", "\"q\"", "é\n"}} {
		enc := AppendStringArray([]byte("x"), ss)
		if enc[0] != 'x' {
			t.Fatalf("prefix lost")
		}
		enc = enc[1:]
		viaJSON, _ := json.Marshal(append([]string{}, ss...))
		d, err := Parse(viaJSON, Options{})
		if err != nil {
			t.Fatalf("Parse(%s): %v", viaJSON, err)
		}
		if got := d.Root().Bytes(); !bytes.Equal(got, enc) {
			t.Errorf("AppendStringArray(%q) = %s, Parse canonical %s", ss, enc, got)
		}
		var back []string
		for _, e := range d.Root().Elements() {
			s, _ := e.Str()
			back = append(back, s)
		}
		if !slices.Equal(back, ss) {
			t.Errorf("%s parses to %q, want %q", enc, back, ss)
		}
	}
}

// TestCanonicalShorterThanInput checks the bound that AppendParse relies on,
// on inputs where every escape is at its shortest.
func TestCanonicalShorterThanInput(t *testing.T) {
	for _, s := range []string{`"\u0001"`, `"\n"`, `"\""`, `"\\"`, `"\u0000\u001f"`, `"\ud83d\ude00"`, `1`, `[]`} {
		d, err := Parse([]byte(s), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(d.Root().Bytes()); n > len(s) {
			t.Errorf("%s: canonical %d bytes > %d", s, n, len(s))
		}
		if !utf8.Valid(d.Root().Bytes()) {
			t.Errorf("%s: canonical not UTF-8", s)
		}
	}
}

// TestSpecialWord checks the eight-byte test of scanString against a byte
// loop: zero exactly when no byte needs attention, and the lowest flagged
// byte always one that does.
func TestSpecialWord(t *testing.T) {
	needs := func(c byte) bool { return !plain[c] }
	check := func(b [8]byte) {
		x := binary.LittleEndian.Uint64(b[:])
		m := special(x)
		first := -1
		for k, c := range b {
			if needs(c) {
				first = k
				break
			}
		}
		if first < 0 {
			if m != 0 {
				t.Fatalf("%q: flagged %x without a special byte", b, m)
			}
			return
		}
		if m == 0 || bits.TrailingZeros64(m)>>3 != first {
			t.Fatalf("%q: mask %x, first special byte %d", b, m, first)
		}
	}
	// Every byte value at every position, among plain and borrow-prone
	// neighbours.
	for _, fill := range []byte{'a', ' ', '!', '#', '[', ']', 0x7f} {
		for pos := range 8 {
			for c := range 256 {
				var b [8]byte
				for k := range b {
					b[k] = fill
				}
				b[pos] = byte(c)
				check(b)
				if pos < 7 {
					b[pos+1] = 0
					check(b)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		var b [8]byte
		for k := range b {
			b[k] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				b[k] = byte(0x20 + r.IntN(0x60))
			}
		}
		check(b)
	}
}
