package jsonv

import (
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func mustParse(t testing.TB, s string) *Doc {
	t.Helper()
	d, err := Parse([]byte(s), Options{})
	if err != nil {
		t.Fatalf("Parse(%q): %v", cut(s, 80), err)
	}
	return d
}

const accessorDoc = `{
	"null": null, "t": true, "f": false,
	"int": -42, "big": 9007199254740991, "dec": 1.50, "exp": 2.5E3, "tiny": 1e-400,
	"s": "h\u00e9llo\n", "plain": "abc", "esc\"name": 1,
	"arr": [1, [2, 3], {"x": 4}, "five"],
	"flat": [10, 20, 30],
	"obj": {"a": {"b": [true]}},
	"empty": {}, "none": []
}`

func TestAccessors(t *testing.T) {
	root := mustParse(t, accessorDoc).Root()
	if root.Kind() != Object || root.Len() != 16 || !root.Exists() {
		t.Fatalf("root kind %v len %d", root.Kind(), root.Len())
	}
	if k := root.Get("null").Kind(); k != Null {
		t.Errorf("null kind %v", k)
	}
	if b, ok := root.Get("t").Bool(); !b || !ok {
		t.Errorf("t = %v %v", b, ok)
	}
	if b, ok := root.Get("f").Bool(); b || !ok {
		t.Errorf("f = %v %v", b, ok)
	}
	if _, ok := root.Get("int").Bool(); ok {
		t.Errorf("Bool on number ok")
	}
	if i, ok := root.Get("int").Int(); i != -42 || !ok {
		t.Errorf("int = %d %v", i, ok)
	}
	if i, ok := root.Get("big").Int(); i != 1<<53-1 || !ok {
		t.Errorf("big = %d %v", i, ok)
	}
	if _, ok := root.Get("dec").Int(); ok {
		t.Errorf("Int on 1.50 ok")
	}
	if f, ok := root.Get("dec").Float(); f != 1.5 || !ok {
		t.Errorf("dec = %v %v", f, ok)
	}
	if f, _ := root.Get("exp").Float(); f != 2500 {
		t.Errorf("exp = %v", f)
	}
	if f, _ := root.Get("tiny").Float(); f != 0 || math.Signbit(f) {
		t.Errorf("tiny = %v", f)
	}
	if f, _ := root.Get("int").Float(); f != -42 {
		t.Errorf("int as float = %v", f)
	}
	if !root.Get("int").IsIntegerForm() || root.Get("dec").IsIntegerForm() || root.Get("exp").IsIntegerForm() || root.Get("s").IsIntegerForm() {
		t.Errorf("IsIntegerForm wrong")
	}
	if l := root.Get("dec").Literal(); l != "1.50" {
		t.Errorf("Literal = %q", l)
	}
	if l := root.Get("exp").Literal(); l != "2.5E3" {
		t.Errorf("Literal = %q", l)
	}
	if l := root.Get("s").Literal(); l != "" {
		t.Errorf("Literal on string = %q", l)
	}
	if s, ok := root.Get("s").Str(); s != "héllo\n" || !ok {
		t.Errorf("s = %q %v", s, ok)
	}
	if !root.Get("s").StrEqual("héllo\n") || root.Get("s").StrEqual("héllo") || root.Get("s").StrEqual("héllo\nx") {
		t.Errorf("StrEqual wrong")
	}
	if !root.Get("plain").StrEqual("abc") || root.Get("int").StrEqual("-42") {
		t.Errorf("StrEqual wrong")
	}
	if _, ok := root.Get("int").Str(); ok {
		t.Errorf("Str on number ok")
	}
	if !root.Get(`esc"name`).Exists() {
		t.Errorf("Get with escaped name failed")
	}
	arr := root.Get("arr")
	if arr.Kind() != Array || arr.Len() != 4 {
		t.Fatalf("arr %v %d", arr.Kind(), arr.Len())
	}
	if got := string(arr.Index(1).Bytes()); got != "[2,3]" {
		t.Errorf("arr[1] = %s", got)
	}
	if v, _ := arr.Index(2).Get("x").Int(); v != 4 {
		t.Errorf("arr[2].x = %d", v)
	}
	if !arr.Index(3).StrEqual("five") || arr.Index(4).Exists() || arr.Index(-1).Exists() {
		t.Errorf("Index bounds wrong")
	}
	flat := root.Get("flat")
	for i, want := range []int64{10, 20, 30} {
		if v, _ := flat.Index(i).Int(); v != want {
			t.Errorf("flat[%d] = %d", i, v)
		}
	}
	if flat.Index(3).Exists() {
		t.Errorf("flat[3] exists")
	}
	var idx []int
	var elems []string
	for i, v := range arr.Elements() {
		idx = append(idx, i)
		elems = append(elems, string(v.Bytes()))
	}
	if !slices.Equal(idx, []int{0, 1, 2, 3}) || !slices.Equal(elems, []string{"1", "[2,3]", `{"x":4}`, `"five"`}) {
		t.Errorf("Elements = %v %v", idx, elems)
	}
	for range arr.Elements() {
		break // early stop must not panic
	}
	var names []string
	for k, v := range root.Members() {
		if k.Kind() != String || !v.Exists() {
			t.Errorf("member kinds %v %v", k.Kind(), v.Kind())
		}
		s, _ := k.Str()
		names = append(names, s)
	}
	if want := []string{"null", "t", "f", "int", "big", "dec", "exp", "tiny", "s", "plain", `esc"name`, "arr", "flat", "obj", "empty", "none"}; !slices.Equal(names[:16], want) {
		t.Errorf("Members order %q", names)
	}
	if b, _ := root.Get("obj").Get("a").Get("b").Index(0).Bool(); !b {
		t.Errorf("deep get failed")
	}
	if root.Get("empty").Len() != 0 || root.Get("none").Len() != 0 || root.Get("empty").Kind() != Object {
		t.Errorf("empty containers wrong")
	}
	// Accessors on the wrong kind and on the zero Value.
	var zero Value
	missing := root.Get("missing")
	for _, v := range []Value{zero, missing, root.Get("int").Get("x"), root.Index(0)} {
		if v.Exists() || v.Kind() != Invalid || v.Len() != 0 || v.Bytes() != nil || v.AppendRaw(nil) != nil {
			t.Errorf("zero value misbehaves: %v", v.Kind())
		}
		if s, e := v.Span(); s != 0 || e != 0 {
			t.Errorf("zero span %d %d", s, e)
		}
		if _, ok := v.Int(); ok {
			t.Errorf("Int ok")
		}
		if _, ok := v.Float(); ok {
			t.Errorf("Float ok")
		}
		for range v.Elements() {
			t.Errorf("Elements yields")
		}
		for range v.Members() {
			t.Errorf("Members yields")
		}
		if v.Get("x").Exists() || v.Index(0).Exists() || v.StrEqual("") || v.Literal() != "" || v.IsIntegerForm() {
			t.Errorf("zero value accessors")
		}
	}
	if (*Doc)(nil).Root().Exists() {
		t.Errorf("nil Doc root exists")
	}
	// Len does not count nested values.
	if root.Get("obj").Len() != 1 || arr.Index(1).Len() != 2 || root.Get("s").Len() != 0 {
		t.Errorf("Len wrong")
	}
}

func TestSpanAndAppendRaw(t *testing.T) {
	d := mustParse(t, `{ "a" : [ 1 , 2 ] }`)
	root := d.Root()
	full := root.Bytes()
	s, e := root.Get("a").Span()
	if string(full[s:e]) != "[1,2]" {
		t.Errorf("span %d..%d = %q", s, e, full[s:e])
	}
	if got := string(root.Get("a").AppendRaw([]byte("x="))); got != "x=[1,2]" {
		t.Errorf("AppendRaw = %q", got)
	}
	b := root.Bytes()
	b[0] = 'X'
	if root.Bytes()[0] != '{' {
		t.Errorf("Bytes aliases the Doc")
	}
}

func TestParseDoesNotAliasInput(t *testing.T) {
	src := []byte(`{"a":"bc","d":[1]}`)
	d := mustParse(t, string(src))
	d2, _ := Parse(src, Options{})
	for i := range src {
		src[i] = ' '
	}
	if got := string(d2.Root().Bytes()); got != `{"a":"bc","d":[1]}` {
		t.Errorf("doc changed with its input: %q", got)
	}
	_ = d
}

func TestAppendParseCapacity(t *testing.T) {
	src := []byte(` { "k" : [ true , "v" ] } `)
	const want = `{"k":[true,"v"]}`

	// Enough spare capacity: no reallocation, spans into buf.
	dst := make([]byte, 3, 3+len(src))
	copy(dst, "abc")
	buf, d, err := AppendParse(dst, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if &buf[0] != &dst[0] || cap(buf) != cap(dst) {
		t.Fatalf("reallocated although capacity sufficed")
	}
	if string(buf) != "abc"+want {
		t.Fatalf("buf = %q", buf)
	}
	s, e := d.Root().Span()
	if s != 3 || e != len(buf) {
		t.Errorf("root span %d..%d", s, e)
	}
	s, e = d.Root().Get("k").Index(1).Span()
	if string(buf[s:e]) != `"v"` {
		t.Errorf("element span %q", buf[s:e])
	}
	// Appending within capacity leaves the Doc intact.
	buf = append(buf, "\n123"[:min(4, cap(buf)-len(buf))]...)
	if &buf[0] != &dst[0] {
		t.Fatalf("append reallocated")
	}
	if got := string(d.Root().Bytes()); got != want {
		t.Errorf("doc after append = %q", got)
	}
	allocs := testing.AllocsPerRun(20, func() {
		_, _, _ = AppendParse(dst[:3], src, Options{})
	})
	if allocs > 1 { // the Doc, tape inline
		t.Errorf("AppendParse with capacity: %v allocations, want 1", allocs)
	}

	// Not enough capacity: a new buffer with the prefix copied.
	small := []byte("abc")
	buf, d, err = AppendParse(small[:3:3], src, Options{})
	if err != nil || string(buf) != "abc"+want || string(small) != "abc" {
		t.Fatalf("buf %q err %v", buf, err)
	}
	if s, _ := d.Root().Span(); s != 3 {
		t.Errorf("span start %d", s)
	}

	// nil dst behaves like Parse.
	buf, d, err = AppendParse(nil, src, Options{})
	if err != nil || string(buf) != want || string(d.Root().Bytes()) != want {
		t.Errorf("nil dst: %q %v", buf, err)
	}
}

func TestParseAllocations(t *testing.T) {
	src := []byte(messageJSON)
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := Parse(src, Options{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 { // canonical buffer, Doc with the tape inline
		t.Errorf("Parse: %v allocations, want ≤ 2", allocs)
	}
}

func TestGetDoesNotAllocate(t *testing.T) {
	root := mustParse(t, `{"role":"assistant","content":[{"type":"text"}],"na\u00efve":1,"t\tab":2}`).Root()
	allocs := testing.AllocsPerRun(100, func() {
		if !root.Get("content").Index(0).Get("type").StrEqual("text") {
			t.Fatal("lookup failed")
		}
		if !root.Get("naïve").Exists() || !root.Get("t\tab").Exists() || root.Get("nope").Exists() {
			t.Fatal("lookup failed")
		}
		if _, ok := root.Get("role").Str(); !ok {
			t.Fatal("Str failed")
		}
		for _, e := range root.Get("content").Elements() {
			for k, v := range e.Members() {
				if !k.StrEqual("type") || !v.StrEqual("text") {
					t.Fatal("iteration failed")
				}
			}
		}
	})
	if allocs > 1 { // the one is Str's string
		t.Errorf("Get/StrEqual allocate: %v", allocs)
	}
}

func TestLargeObject(t *testing.T) {
	const n = 100_000
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"member` + strconv.Itoa(i) + `":{"v":` + strconv.Itoa(i) + `}`)
	}
	b.WriteString("}")
	src := b.String()
	d := mustParse(t, src)
	root := d.Root()
	if root.Len() != n {
		t.Fatalf("Len %d", root.Len())
	}
	if v, _ := root.Get("member99999").Get("v").Int(); v != 99999 {
		t.Errorf("Get = %d", v)
	}
	// A duplicate at the very end is found through the hash set, and a
	// nested large object gets its own set.
	_, err := Parse([]byte(src[:len(src)-1]+`,"member12345":0}`), Options{})
	if err == nil || !strings.Contains(err.Error(), `"member12345"`) {
		t.Errorf("duplicate in large object: %v", err)
	}
	nested := `{"a":` + src + `,"b":` + src + `,"a":1}`
	if _, err := Parse([]byte(nested), Options{}); err == nil || !strings.Contains(err.Error(), `name "a"`) {
		t.Errorf("outer duplicate after large inner objects: %v", err)
	}
	// Equal in reversed member order stays fast through the name index.
	var r strings.Builder
	r.WriteString("{")
	for i := n - 1; i >= 0; i-- {
		r.WriteString(`"member` + strconv.Itoa(i) + `":{"v":` + strconv.Itoa(i) + `}`)
		if i > 0 {
			r.WriteString(",")
		}
	}
	r.WriteString("}")
	if !Equal(root, mustParse(t, r.String()).Root()) {
		t.Errorf("reversed large object not equal")
	}
}

func TestDeepNestingWithoutRecursion(t *testing.T) {
	const depth = 100_000
	src := nest("[", "]", depth)
	d, err := Parse([]byte(src), Options{MaxDepth: depth})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := Parse([]byte(nest("[", "]", depth-1)+""), Options{MaxDepth: depth})
	if !Equal(d.Root(), d.Root()) {
		t.Errorf("deep doc not equal to itself")
	}
	if p, ok := FirstDifference(d.Root(), other.Root()); !ok || p != strings.Repeat("/0", depth-1) {
		t.Errorf("FirstDifference on deep docs: %v %d", ok, len(p))
	}
	if _, err := Parse([]byte(src), Options{}); err == nil {
		t.Errorf("default depth accepted %d levels", depth)
	}
}

// TestMemoryLinearInInput parses a large, realistic input and checks that
// the memory allocated stays a small multiple of its size.
func TestMemoryLinearInInput(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates tens of MiB")
	}
	var b strings.Builder
	b.WriteString("[")
	for b.Len() < 16<<20 {
		b.WriteString(messageJSON)
		b.WriteString(",\n")
	}
	b.WriteString("null]")
	src := []byte(b.String())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := Parse(src, Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	got := after.TotalAlloc - before.TotalAlloc
	if got > 3*uint64(len(src)) {
		t.Errorf("Parse of %d bytes allocated %d bytes", len(src), got)
	}
	runtime.KeepAlive(d)
}

func TestEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		eq   bool
	}{
		{`null`, `null`, true},
		{`true`, `true`, true},
		{`true`, `false`, false},
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`1.50`, `1.5`, true},
		{`100`, `1E2`, true},
		{`0.1`, `0.10000000000000001`, true},
		{`1`, `2`, false},
		{`1`, `"1"`, false},
		{`"A"`, `"\u0041"`, true},
		{`"a\/b"`, `"a/b"`, true},
		{`"a"`, `"b"`, false},
		{`[1,2]`, `[1,2]`, true},
		{`[1,2]`, `[2,1]`, false},
		{`[1,2]`, `[1,2,3]`, false},
		{`[]`, `{}`, false},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`{"a":1,"b":2}`, `{"a":1}`, false},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1}`, `{"b":1}`, false},
		{`{"a":{"x":[1,{"y":null}]}}`, `{"a":{"x":[1.0,{"y":null}]}}`, true},
		{`{"a":{"x":[1,{"y":null}]}}`, `{"a":{"x":[1,{"y":false}]}}`, false},
		{`{"\u0061":1}`, `{"a":1}`, true},
	} {
		a, b := mustParse(t, c.a).Root(), mustParse(t, c.b).Root()
		if got := Equal(a, b); got != c.eq {
			t.Errorf("Equal(%s, %s) = %v", c.a, c.b, got)
		}
		if got := Equal(b, a); got != c.eq {
			t.Errorf("Equal(%s, %s) = %v", c.b, c.a, got)
		}
		if _, diff := FirstDifference(a, b); diff == c.eq {
			t.Errorf("FirstDifference(%s, %s) ok = %v", c.a, c.b, diff)
		}
	}
	if !Equal(Value{}, Value{}) || Equal(Value{}, mustParse(t, "null").Root()) {
		t.Errorf("zero Value equality wrong")
	}
	// Equal on documents of small objects does not allocate.
	x, y := mustParse(t, messageJSON).Root(), mustParse(t, messageJSON).Root()
	if allocs := testing.AllocsPerRun(20, func() {
		if !Equal(x, y) {
			t.Fatal("not equal")
		}
	}); allocs != 0 {
		t.Errorf("Equal allocates %v times", allocs)
	}
	// Values inside one Doc.
	r := mustParse(t, `[{"a":[1]},{"a":[1.0]},{"a":[2]}]`).Root()
	if !Equal(r.Index(0), r.Index(1)) || Equal(r.Index(0), r.Index(2)) {
		t.Errorf("Equal within a doc wrong")
	}
}

func TestFirstDifference(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{`1`, `"1"`, ""},
		{`1`, `2`, ""},
		{`{"a":1,"b":[1,2]}`, `{"b":[1,3],"a":1}`, "/b/1"},
		{`{"a":1,"b":[1,2]}`, `{"b":[1,3],"a":2}`, "/a"},
		{`{"a":1,"b":2}`, `{"b":2}`, "/a"},
		{`{"a":1}`, `{"a":1,"c":2}`, "/c"},
		{`{"a":1}`, `{"z":0,"a":1,"c":2}`, "/z"},
		{`[1,2]`, `[1,2,3]`, "/2"},
		{`[1,2,3]`, `[1]`, "/1"},
		{`[[],[[1]]]`, `[[],[[1,2]]]`, "/1/0/1"},
		{`{"a/b~":1}`, `{"a/b~":2}`, "/a~1b~0"},
		{`{"x":{"é\n":true}}`, `{"x":{"é\n":false}}`, "/x/é\n"},
		{`{"x":[]}`, `{"x":{}}`, "/x"},
	} {
		a, b := mustParse(t, c.a).Root(), mustParse(t, c.b).Root()
		got, ok := FirstDifference(a, b)
		if !ok || got != c.want {
			t.Errorf("FirstDifference(%s, %s) = %q %v, want %q", c.a, c.b, got, ok, c.want)
		}
	}
	a := mustParse(t, `{"a":[1,{"b":2}],"c":"d"}`).Root()
	b := mustParse(t, `{"c":"d","a":[1.0,{"b":2e0}]}`).Root()
	if p, ok := FirstDifference(a, b); ok {
		t.Errorf("equal values differ at %q", p)
	}
	if p, ok := FirstDifference(a, Value{}); !ok || p != "" {
		t.Errorf("against zero Value: %q %v", p, ok)
	}
}

// TestConcurrentReads reads one Doc from several goroutines (run with -race).
func TestConcurrentReads(t *testing.T) {
	d := mustParse(t, messageJSON)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				r := d.Root()
				if !r.Get("usage").Get("input_tokens").Exists() || !Equal(r, r) {
					t.Error("read failed")
					return
				}
				for k, v := range r.Members() {
					_, _ = k.Str()
					_ = v.Bytes()
				}
			}
		}()
	}
	wg.Wait()
}

// RawEqual compares canonical encodings: a string written with escapes
// equals the same string written without, and the zero Value equals
// nothing; it does not allocate.
func TestRawEqual(t *testing.T) {
	root := mustParse(t, `{"a":"c\u0031","b":"c1","n":1,"e":""}`).Root()
	if !root.Get("a").RawEqual([]byte(`"c1"`)) || !root.Get("b").RawEqual(root.Get("a").Bytes()) {
		t.Errorf("equal strings differ")
	}
	if root.Get("a").RawEqual([]byte(`"c2"`)) || root.Get("a").RawEqual([]byte(`c1`)) || root.Get("n").RawEqual([]byte(`"1"`)) {
		t.Errorf("different values equal")
	}
	if !root.Get("e").RawEqual([]byte(`""`)) || root.Get("zz").RawEqual(nil) || root.Get("zz").RawEqual([]byte{}) {
		t.Errorf("empty or absent wrong")
	}
	raw := []byte(`"c1"`)
	if n := testing.AllocsPerRun(100, func() { root.Get("a").RawEqual(raw) }); n != 0 {
		t.Errorf("RawEqual allocates %.0f times", n)
	}
}
