package jsonv

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// FuzzParse checks jsonv against encoding/json. jsonv accepts a subset of
// what json.Valid accepts, rejecting the rest with an extra rule's code
// (never JSON_SYNTAX); what it accepts decodes to the same values from the
// input and from the canonical encoding, and the canonical encoding is a
// fixed point. The seed corpus is testdata/fuzz/FuzzParse.
// fuzzReparser is reused across FuzzParse inputs (a fuzz worker calls the
// target from one goroutine).
var fuzzReparser Reparser

func FuzzParse(f *testing.F) {
	f.Add([]byte(messageJSON))
	f.Fuzz(func(t *testing.T, src []byte) {
		keep := bytes.Clone(src)
		d, err := Parse(src, Options{})
		if !bytes.Equal(src, keep) {
			t.Fatal("Parse changed its input")
		}
		// A Reparser, reused from input to input, agrees with Parse.
		rbuf, rd, rerr := fuzzReparser.AppendParse(nil, src, Options{})
		if (err == nil) != (rerr == nil) || err != nil && err.Error() != rerr.Error() {
			t.Fatalf("Reparser error %v; Parse error %v", rerr, err)
		}
		if err == nil && (!bytes.Equal(rbuf, d.buf) || !slices.Equal(rd.tape, d.tape)) {
			t.Fatalf("Reparser parsed %q differently from Parse", src)
		}
		valid := json.Valid(src)
		if err != nil {
			var e *sdk.Error
			if !errors.As(err, &e) || e.Op != "json" || e.Seq != nil || e.Index != nil {
				t.Fatalf("error %#v", err)
			}
			if d != nil {
				t.Fatal("Doc returned with an error")
			}
			if !valid {
				return
			}
			switch e.Code {
			case sdk.CodeJSONInvalidUTF8, sdk.CodeJSONDuplicateKey, sdk.CodeJSONNegativeZero,
				sdk.CodeJSONNumberNotFinite, sdk.CodeJSONUnsafeInteger, sdk.CodeJSONTooDeep:
			default:
				t.Fatalf("json.Valid accepts %q but jsonv says %v", src, err)
			}
			return
		}
		if !valid {
			t.Fatalf("jsonv accepts %q, json.Valid rejects it", src)
		}
		canon := d.Root().Bytes()
		if len(canon) > len(src) {
			t.Fatalf("canonical %q longer than input %q", canon, src)
		}
		d2, err := Parse(canon, Options{})
		if err != nil {
			t.Fatalf("canonical %q of %q rejected: %v", canon, src, err)
		}
		if again := d2.Root().Bytes(); !bytes.Equal(again, canon) {
			t.Fatalf("canonical not idempotent: %q → %q", canon, again)
		}
		if !Equal(d.Root(), d2.Root()) {
			t.Fatalf("Equal(doc, re-parsed canonical) is false for %q", src)
		}
		if p, ok := FirstDifference(d.Root(), d2.Root()); ok {
			t.Fatalf("FirstDifference(doc, re-parsed) = %q for %q", p, src)
		}
		want, got := decode(t, src), decode(t, canon)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("encoding/json reads %q as %#v but its canonical %q as %#v", src, want, canon, got)
		}
		// AppendParse agrees with Parse.
		buf, d3, err := AppendParse([]byte("pre"), src, Options{})
		if err != nil || !bytes.Equal(buf[3:], canon) || !bytes.Equal(d3.Root().Bytes(), canon) {
			t.Fatalf("AppendParse disagrees: %q %v", buf, err)
		}
		walk(t, d.Root(), 0)
	})
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", b, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("encoding/json finds more after %q: %v", b, err)
	}
	return v
}

// walk exercises every accessor on every value (they must not panic) and
// checks that accessors agree with each other.
func walk(t *testing.T, v Value, depth int) {
	if depth > 64 {
		return
	}
	switch v.Kind() {
	case String:
		s, ok := v.Str()
		if !ok || !v.StrEqual(s) || v.StrEqual(s+"x") {
			t.Fatalf("Str/StrEqual disagree on %q", v.Bytes())
		}
		if enc := AppendString(nil, s); !bytes.Equal(enc, v.Bytes()) {
			t.Fatalf("AppendString(Str()) = %q, canonical %q", enc, v.Bytes())
		}
	case Number:
		if _, ok := v.Float(); !ok {
			t.Fatal("Float not ok")
		}
		if i, ok := v.Int(); ok != v.IsIntegerForm() || ok && (i > 1<<53-1 || i < -(1<<53-1)) {
			t.Fatalf("Int %d %v on %s", i, ok, v.Literal())
		}
	case Array:
		n := 0
		for i, e := range v.Elements() {
			if !Equal(e, v.Index(i)) {
				t.Fatalf("Index(%d) differs from Elements", i)
			}
			walk(t, e, depth+1)
			n++
		}
		if n != v.Len() {
			t.Fatalf("Len %d, %d elements", v.Len(), n)
		}
	case Object:
		n := 0
		for k, m := range v.Members() {
			s, _ := k.Str()
			if got := v.Get(s); got != m {
				t.Fatalf("Get(%q) is not the member", s)
			}
			walk(t, m, depth+1)
			n++
		}
		if n != v.Len() {
			t.Fatalf("Len %d, %d members", v.Len(), n)
		}
	}
}

// TestFuzzSeedsCoverRules checks that the seed corpus holds an accepted
// input and a rejection for every rule, named after it.
func TestFuzzSeedsCoverRules(t *testing.T) {
	codes := map[string]sdk.Code{
		"accept": "",
		"j2":     sdk.CodeJSONInvalidUTF8,
		"j3":     sdk.CodeJSONSyntax,
		"j4":     sdk.CodeJSONInvalidUTF8,
		"j5":     sdk.CodeJSONDuplicateKey,
		"j6":     sdk.CodeJSONTooDeep,
		"j7":     sdk.CodeJSONNegativeZero,
		"j8":     sdk.CodeJSONNumberNotFinite,
		"j9":     sdk.CodeJSONUnsafeInteger,
	}
	seen := map[string]bool{}
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		header, lit, _ := strings.Cut(string(data), "\n")
		lit = strings.TrimSuffix(strings.TrimSpace(lit), ")")
		lit, ok := strings.CutPrefix(lit, "[]byte(")
		src, qerr := strconv.Unquote(lit)
		if header != "go test fuzz v1" || !ok || qerr != nil {
			t.Fatalf("%s: not a fuzz corpus file", e.Name())
		}
		rule, _, _ := strings.Cut(e.Name(), "_")
		want, known := codes[rule]
		if !known {
			t.Fatalf("%s: name does not start with a rule", e.Name())
		}
		seen[rule] = true
		_, err = Parse([]byte(src), Options{})
		if sdk.CodeOf(err) != want {
			t.Errorf("%s: got %v, want %q", e.Name(), err, want)
		}
	}
	for rule := range codes {
		if !seen[rule] {
			t.Errorf("no seed for %s", rule)
		}
	}
}
