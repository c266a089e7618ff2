package jsonv

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// ruleCase is one rejected input: the code it must get and the values the
// detail must name.
type ruleCase struct {
	name   string
	src    string
	detail []string
}

func runRejected(t *testing.T, code sdk.Code, opt Options, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := []byte(c.src)
			keep := string(src)
			d, err := Parse(src, opt)
			if err == nil {
				t.Fatalf("Parse(%q) accepted: %s", cut(c.src, 80), d.Root().Bytes())
			}
			if d != nil {
				t.Errorf("Parse(%q) returned a Doc with the error", cut(c.src, 80))
			}
			var e *sdk.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not *sdk.Error", err, err)
			}
			if e.Code != code || !errors.Is(err, code) {
				t.Fatalf("Parse(%q) code %s, want %s: %v", cut(c.src, 80), e.Code, code, err)
			}
			if e.Op != "json" || e.Seq != nil || e.Index != nil || e.SessionID != "" {
				t.Errorf("error %v; want op json and no seq, index or session", e)
			}
			for _, want := range c.detail {
				if !strings.Contains(e.Detail, want) {
					t.Errorf("detail %q lacks %q", cut(e.Detail, 300), want)
				}
			}
			if string(src) != keep {
				t.Errorf("Parse changed its input")
			}
			// AppendParse rejects the same way and hands back dst.
			dst := []byte("prefix")
			buf, d2, err2 := AppendParse(dst, src, opt)
			if sdk.CodeOf(err2) != code || d2 != nil || string(buf) != "prefix" {
				t.Errorf("AppendParse: code %s doc %v buf %q", sdk.CodeOf(err2), d2, buf)
			}
		})
	}
}

func runAccepted(t *testing.T, opt Options, srcs ...string) {
	t.Helper()
	for _, s := range srcs {
		if _, err := Parse([]byte(s), opt); err != nil {
			t.Errorf("Parse(%q): %v", cut(s, 80), err)
		}
	}
}

func nest(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

func TestJ2InvalidUTF8(t *testing.T) {
	runRejected(t, sdk.CodeJSONInvalidUTF8, Options{}, []ruleCase{
		{"byte 0xFF", "\xff", []string{"offset 0"}},
		{"in string", "\"ab\xffc\"", []string{"offset 3"}},
		{"in member name", "{\"k\xfe\":1}", []string{"offset 3"}},
		{"truncated sequence", "[\"\xc3\"]", []string{"offset 2"}},
		{"truncated at end", "\"\xe2\x82", []string{"offset 1"}},
		{"overlong", "\"\xc0\xaf\"", []string{"offset 1"}},
		{"encoded surrogate", "\"\xed\xa0\x80\"", []string{"offset 1"}},
		{"beyond U+10FFFF", "\"\xf4\x90\x80\x80\"", []string{"offset 1"}},
		{"stray continuation", "\"a\x80\"", []string{"offset 2"}},
		{"outside string where a value is due", "[1,\xff]", []string{"offset 3"}},
		{"outside string where a comma is due", "[1\xff]", []string{"offset 2"}},
		{"trailing", "[1] \xff", []string{"offset 4"}},
		{"in literal", "tr\xffe", []string{"offset 2"}},
		{"in number", "-\xff", []string{"offset 1"}},
		{"in escape", "\"\\\xff\"", []string{"offset 2"}},
		{"in hex escape", "\"\\u00\xff0\"", []string{"offset 5"}},
	})
}

func TestJ3Syntax(t *testing.T) {
	runRejected(t, sdk.CodeJSONSyntax, Options{}, []ruleCase{
		{"NaN", "NaN", []string{"offset 0", `"NaN"`}},
		{"NaN in array", "[1,NaN]", []string{"offset 3", `"NaN"`}},
		{"Infinity", "Infinity", []string{"offset 0", `"Infinity"`}},
		{"-Infinity", "-Infinity", []string{"offset 0", `"-Infinity"`}},
		{"+1", "+1", []string{"offset 0", `"+1"`}},
		{"01", "01", []string{"offset 0", `"01"`, "leading zero"}},
		{"-01", "[-01]", []string{"offset 1", `"-01"`}},
		{"00", "00", []string{"offset 0", `"00"`}},
		{"1.", "1.", []string{"offset 0", `"1."`}},
		{".5", ".5", []string{"offset 0", `".5"`}},
		{"1.e5", "1.e5", []string{"offset 0", `"1.e5"`}},
		{"1e", "[1e]", []string{"offset 1", `"1e"`}},
		{"1e+", "1e+", []string{"offset 0", `"1e+"`}},
		{"hex", "0x10", []string{"offset 1", `"x10"`}},
		{"line comment", "// c\n1", []string{"offset 0", `'/'`}},
		{"block comment", "[1 /* c */]", []string{"offset 3", `'/'`}},
		{"trailing comment", "{} // c", []string{"offset 3", "trailing"}},
		{"trailing data", "1 2", []string{"offset 2", `"2"`, "trailing"}},
		{"two objects", `{"a":1}{"b":2}`, []string{"offset 7", `'{'`, "trailing"}},
		{"trailing comma array", "[1,]", []string{"offset 3", `']'`}},
		{"trailing comma object", `{"a":1,}`, []string{"offset 7", `'}'`}},
		{"missing colon", `{"a" 1}`, []string{"offset 5", `"1"`}},
		{"missing comma", `[1 2]`, []string{"offset 3", `"2"`}},
		{"number name", `{1:2}`, []string{"offset 1", `"1"`}},
		{"single quotes", `['a']`, []string{"offset 1", `'\''`}},
		{"unterminated string", `"abc`, []string{"offset 4", "end of input"}},
		{"unterminated name", `{"a`, []string{"offset 3", "end of input"}},
		{"unterminated array", `[1,2`, []string{"offset 4", "end of input"}},
		{"unterminated object", `{"a":1`, []string{"offset 6", "end of input"}},
		{"empty input", ``, []string{"offset 0", "end of input"}},
		{"whitespace only", " \n\t", []string{"offset 3", "end of input"}},
		{"raw newline in string", "\"a\nb\"", []string{"offset 2", "U+000A"}},
		{"raw NUL in string", "\"\x00\"", []string{"offset 1", "U+0000"}},
		{"raw tab in name", "{\"\t\":1}", []string{"offset 2", "U+0009"}},
		{"bad escape", `"\x"`, []string{"offset 1", `\\x`}},
		{"bad escape apostrophe", `"\'"`, []string{"offset 1", `\\'`}},
		{"bad hex", `"\u12G4"`, []string{"offset 1", `\\u12G`}},
		{"short hex", `"\u12"`, []string{"offset 1", `\\u12\"`}},
		{"escape at end", `"\`, []string{"offset 2", "end of input"}},
		{"bad literal", `tru`, []string{"offset 0", `"tru"`}},
		{"capital literal", `True`, []string{"offset 0", `"True"`}},
		{"nul", `[nul]`, []string{"offset 1", `"nul"`}},
		{"null prefix", `nullx`, []string{"offset 4", `"x"`}},
		{"lone bracket", `]`, []string{"offset 0", `']'`}},
		{"mismatched", `[}`, []string{"offset 1", `'}'`}},
		{"BOM", "\ufeff1", []string{"offset 0", `'\ufeff'`}},
		{"non-ASCII outside string", "é", []string{"offset 0", `'é'`}},
		{"vertical tab whitespace", "\v1", []string{"offset 0"}},
		{"form feed whitespace", "[\f]", []string{"offset 1"}},
	})
}

func TestJ4Surrogates(t *testing.T) {
	runRejected(t, sdk.CodeJSONInvalidUTF8, Options{}, []ruleCase{
		{"lone high", `"\ud800"`, []string{"offset 1", `\ud800`}},
		{"lone high upper case", `["x\uD83D"]`, []string{"offset 3", `\uD83D`}},
		{"lone low", `"\udc00"`, []string{"offset 1", `\udc00`}},
		{"high then letter", `"\ud800x"`, []string{"offset 1"}},
		{"high then BMP escape", `"\ud800\u0041"`, []string{"offset 1"}},
		{"high then high", `"\ud800\ud800"`, []string{"offset 1"}},
		{"reversed pair", `"\ude00\ud83d"`, []string{"offset 1"}},
		{"high then bad hex", `"\ud800\uZZZZ"`, []string{"offset 1"}},
		{"in member name", `{"a\udfff":1}`, []string{"offset 3"}},
		{"high at end", `"\ud800`, []string{"offset 1"}},
	})
	runAccepted(t, Options{}, `"\ud83d\ude00"`, `"\uD83D\uDE00"`, `"\uffff"`, `"\u0000"`, `"\ue000"`)
}

func TestJ5DuplicateKey(t *testing.T) {
	var many strings.Builder
	many.WriteString("{")
	for i := range 1000 {
		many.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i) + `,`)
	}
	many.WriteString(`"k500":0}`)
	runRejected(t, sdk.CodeJSONDuplicateKey, Options{}, []ruleCase{
		{"escaped equal", `{"a":1,"\u0061":2}`, []string{`"a"`, `pointer ""`, "offset 7"}},
		{"plain", `{"a":1,"a":2}`, []string{`"a"`, `pointer ""`}},
		{"not adjacent", `{"a":1,"b":2,"a":3}`, []string{`"a"`, `pointer ""`}},
		{"nested", `{"x":{"k":1,"k":2}}`, []string{`"k"`, `pointer "/x"`}},
		{"in array", `[{},{"a":1,"a":1}]`, []string{`"a"`, `pointer "/1"`}},
		{"escaped control", `{"\n":1,"\u000a":2}`, []string{`"\n"`}},
		{"escaped slash", `{"a/b":1,"a\/b":2}`, []string{`"a/b"`}},
		{"surrogate pair", `{"😀":1,"\ud83d\ude00":2}`, []string{`"😀"`}},
		{"pointer escaping", `{"a/b~":{"c":1,"c":2}}`, []string{`pointer "/a~1b~0"`}},
		{"empty name", `{"":1,"":2}`, []string{`""`}},
		{"large object", many.String(), []string{`"k500"`, `pointer ""`}},
		{"before a later violation", `{"a":1,"a":-0}`, []string{`"a"`}},
	})
	runAccepted(t, Options{}, `{"a":1,"A":2,"a ":3,"\u0062":4}`, `{"a":{"a":{"a":1}},"b":[{"a":1},{"a":1}]}`)
}

func TestJ6TooDeep(t *testing.T) {
	deepPointer := strings.Repeat("/0", 512)
	runRejected(t, sdk.CodeJSONTooDeep, Options{}, []ruleCase{
		{"513 arrays", nest("[", "]", 513), []string{`pointer "` + deepPointer + `"`, "deeper than 512", "offset 512"}},
		{"513 objects", strings.Repeat(`{"a":`, 513) + "1" + strings.Repeat("}", 513),
			[]string{`pointer "` + strings.Repeat("/a", 512) + `"`}},
		{"10000 arrays", nest("[", "]", 10000), []string{`pointer "` + deepPointer + `"`}},
		{"10000 unclosed", strings.Repeat("[", 10000), []string{`pointer "` + deepPointer + `"`}},
		{"mixed", strings.Repeat(`[{"k":`, 300), []string{`pointer "` + strings.Repeat("/0/k", 256) + `"`}},
		{"after siblings", `[` + strings.Repeat(`1,`, 7) + nest("[", "]", 512) + `]`,
			[]string{`pointer "/7` + strings.Repeat("/0", 511) + `"`}},
	})
	runRejected(t, sdk.CodeJSONTooDeep, Options{MaxDepth: 2}, []ruleCase{
		{"option", `[1,[2,[3]]]`, []string{`pointer "/1/1"`, "deeper than 2"}},
		{"option object", `{"a":{},"b":{"c":{}}}`, []string{`pointer "/b/c"`}},
	})
	runAccepted(t, Options{}, nest("[", "]", 512), strings.Repeat(`{"a":`, 511)+"[1]"+strings.Repeat("}", 511))
	runAccepted(t, Options{MaxDepth: 20000}, nest("[", "]", 10000))
	runAccepted(t, Options{MaxDepth: 1}, `[1,2]`, `{"a":1}`, `1`)
}

// With Enclosing, the limit and the error are those of the value that many
// levels down: an envelope may hold data exactly 512 deep, an array of
// envelopes too, and data one level deeper is refused naming 512.
func TestJ6Enclosing(t *testing.T) {
	envelope := func(data string) string { return `{"seq":0,"data":` + data + `}` }
	runAccepted(t, Options{Enclosing: 1}, envelope(nest("[", "]", 512)))
	runAccepted(t, Options{Enclosing: 2}, "["+envelope("1")+","+envelope(nest("[", "]", 512))+"]")
	runRejected(t, sdk.CodeJSONTooDeep, Options{Enclosing: 1}, []ruleCase{
		{"envelope", envelope(nest("[", "]", 513)), []string{`pointer "/data` + strings.Repeat("/0", 512) + `"`, "deeper than 512 at"}},
	})
	runRejected(t, sdk.CodeJSONTooDeep, Options{Enclosing: 2}, []ruleCase{
		{"array of envelopes", "[" + envelope("1") + "," + envelope(nest("[", "]", 513)) + "]",
			[]string{`pointer "/1/data` + strings.Repeat("/0", 512) + `"`, "deeper than 512 at"}},
	})
	runRejected(t, sdk.CodeJSONTooDeep, Options{MaxDepth: 2, Enclosing: 1}, []ruleCase{
		{"option", `{"d":[[[1]]]}`, []string{`pointer "/d/0/0"`, "deeper than 2 at"}},
	})
	runAccepted(t, Options{Enclosing: -3}, nest("[", "]", 512))
}

func TestJ7NegativeZero(t *testing.T) {
	runRejected(t, sdk.CodeJSONNegativeZero, Options{}, []ruleCase{
		{"-0", "-0", []string{`"-0"`, `pointer ""`}},
		{"-0.0", "-0.0", []string{`"-0.0"`}},
		{"-0.0e3", "-0.0e3", []string{`"-0.0e3"`}},
		{"-0e7", "-0e7", []string{`"-0e7"`}},
		{"-0E-0", "-0E-0", []string{`"-0E-0"`}},
		{"-1e-400", "-1e-400", []string{`"-1e-400"`}},
		{"-0.000", "[-0.000]", []string{`"-0.000"`, `pointer "/0"`}},
		{"long underflow", "-0." + strings.Repeat("0", 400) + "1", []string{`"-0.000`}},
		{"nested", `{"a":[1,{"b":-0}]}`, []string{`"-0"`, `pointer "/a/1/b"`, "offset 13"}},
		{"before syntax error", `[-0`, []string{`"-0"`}},
	})
	runAccepted(t, Options{}, "0", "0.0", "0e7", "1e-400", "-1e-300", "-0.1", "-4.9e-324", "-0."+strings.Repeat("0", 300)+"1")
}

func TestJ8NotFinite(t *testing.T) {
	big := "1" + strings.Repeat("0", 400)
	runRejected(t, sdk.CodeJSONNumberNotFinite, Options{}, []ruleCase{
		{"1e400", "1e400", []string{`"1e400"`, `pointer ""`}},
		{"-1e400", "[-1e400]", []string{`"-1e400"`, `pointer "/0"`}},
		{"just above max", "1.7976931348623159e308", []string{`"1.7976931348623159e308"`}},
		{"long decimal", big + ".5", []string{`"1000`}},
		{"long integer", big, []string{`"1000`}},
		{"nested", `{"x":{"y":1E+999}}`, []string{`"1E+999"`, `pointer "/x/y"`}},
	})
	runAccepted(t, Options{}, "1.7976931348623157e308", "1e-400", "0e999999", "4.9e-324", "1e308")
}

func TestJ9UnsafeInteger(t *testing.T) {
	runRejected(t, sdk.CodeJSONUnsafeInteger, Options{}, []ruleCase{
		{"2^53", "9007199254740992", []string{`"9007199254740992"`, `pointer ""`}},
		{"-2^53", "-9007199254740992", []string{`"-9007199254740992"`}},
		{"17 digits", `{"n":12345678901234567}`, []string{`"12345678901234567"`, `pointer "/n"`}},
		{"2^64", "[18446744073709551616]", []string{`"18446744073709551616"`, `pointer "/0"`}},
		{"2^60 from Go", "1152921504606846976", []string{`"1152921504606846976"`}},
	})
	runAccepted(t, Options{}, "9007199254740991", "-9007199254740991", "9007199254740992.0",
		"9007199254740992e0", "1000000000000000", "99999999999999.5")
}

// TestFirstViolationWins checks that the first violation in document order
// decides the code.
func TestFirstViolationWins(t *testing.T) {
	for _, c := range []struct {
		src  string
		code sdk.Code
	}{
		{"[-0,\"\xff\"]", sdk.CodeJSONNegativeZero},
		{"[\"\xff\",-0]", sdk.CodeJSONInvalidUTF8},
		{`{"a":1,"a":-0}`, sdk.CodeJSONDuplicateKey},
		{`[1e400,9007199254740992]`, sdk.CodeJSONNumberNotFinite},
		{`[9007199254740992,1e400]`, sdk.CodeJSONUnsafeInteger},
		{`[-0 x`, sdk.CodeJSONNegativeZero},
		{`[x, -0]`, sdk.CodeJSONSyntax},
		{`["\ud800", NaN]`, sdk.CodeJSONInvalidUTF8},
		{`[NaN, "\ud800"]`, sdk.CodeJSONSyntax},
		{nest("[", "]", 513) + "\xff", sdk.CodeJSONTooDeep},
		{"1" + strings.Repeat("0", 400), sdk.CodeJSONNumberNotFinite}, // J8 before J9 on one literal
	} {
		_, err := Parse([]byte(c.src), Options{})
		if sdk.CodeOf(err) != c.code {
			t.Errorf("Parse(%q) = %v, want %s", cut(c.src, 60), err, c.code)
		}
	}
}

// TestLosslessNumberAndStringRules checks the lossless-JSON rules
// (negative zero, numbers out of range, unsafe integers, …) that belong to
// jsonv.
func TestLosslessNumberAndStringRules(t *testing.T) {
	for _, c := range []struct {
		src  string
		code sdk.Code
	}{
		{"-0", sdk.CodeJSONNegativeZero},
		{"-0.0e3", sdk.CodeJSONNegativeZero},
		{"-1e-400", sdk.CodeJSONNegativeZero},
		{"1e400", sdk.CodeJSONNumberNotFinite},
		{"9007199254740992", sdk.CodeJSONUnsafeInteger},
		{"9007199254740991", ""},
		{"9007199254740992.0", ""},
		{`{"a":1,"\u0061":2}`, sdk.CodeJSONDuplicateKey},
		{"NaN", sdk.CodeJSONSyntax},
		{"\xff", sdk.CodeJSONInvalidUTF8},
		{`"\ud800"`, sdk.CodeJSONInvalidUTF8},
		{nest("[", "]", 513), sdk.CodeJSONTooDeep},
		{nest("[", "]", 512), ""},
	} {
		for _, wrap := range []string{"%s", `{"items":%s}`} {
			if wrap != "%s" && strings.HasPrefix(c.src, "[[") {
				continue // the wrapper would add a level
			}
			src := strings.Replace(wrap, "%s", c.src, 1)
			_, err := Parse([]byte(src), Options{})
			if sdk.CodeOf(err) != c.code {
				t.Errorf("Parse(%q) = %v, want %q", cut(src, 60), err, c.code)
			}
		}
	}
	d, err := Parse([]byte(`{"b":1,"a":1.50}`), Options{})
	if err != nil || string(d.Root().Bytes()) != `{"b":1,"a":1.50}` {
		t.Errorf(`{"b":1,"a":1.50} → %v, %v`, d, err)
	}
}
