package session

// One test per error code of the session core (docs/errors.md table: envelope,
// lossless JSON, payloads, developer binding, surface, projections, session
// state, restore wrapping), each asserting the code, that the detail names
// the offending values, and that a rejected append changed nothing. Then the
// hostile inputs: huge and deeply nested data, broken UTF-8, forged seqs,
// crossing spans and every malformed surfaceOp shape — never a panic.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// baseSession returns a session with a bit of everything, so that "nothing
// changed" compares something: a header at 1, nodes [2 4 6 8], both
// generations 1. The next seq is 9.
func baseSession(t testing.TB, mods ...func(*Options)) *Session {
	t.Helper()
	s, _ := newTestSession(t, mods...)
	mustAppendAll(t, s,
		evTurnStart(1),                                // 0
		evHeader("initial", headerV1),                 // 1
		evU("u2", "hello"),                            // 2
		evStepStart(1, 1),                             // 3
		evACalls(1, 1, "a4", "c1"),                    // 4
		evToolCall(1, 1, "c1"),                        // 5
		evR("r6", "c1", "result"),                     // 6
		evU("u7", "more"),                             // 7
		replacing(evU("u8", "more, edited"), 7, 7, 7), // 8
	)
	return s
}

// blobIn is an ignorable event of a type unknown to this build: its data is
// any lossless JSON, so it isolates the JSON rules from the payload rules.
func blobIn(data string) AppendInput {
	return AppendInput{Type: "ext/blob", Data: tcRaw(data), Ignorable: true}
}

// restoreBase is a valid stored prefix for restore tests; the next index is 2.
func restoreBase() [][]byte {
	return [][]byte{envLine(0, TypeTurnStart, `{"turn":1}`, ""), envLine(1, TypeUserMessage, dataUser("u1", "a"), `,"surfaceOp":"append"`)}
}

func withEnv(extra ...[]byte) [][]byte { return append(restoreBase(), extra...) }

// rawEnv is an envelope at index 2 with the given raw members after data.
func rawEnv(typ, data, rest string) []byte { return envLine(2, typ, data, rest) }

type jsonCase struct {
	name, data string
	parts      []string
}

// runJSONCases checks a lossless-JSON rule on append (data of an ignorable
// blob) and on restore (the same data inside a stored envelope).
func runJSONCases(t *testing.T, code sdk.Code, cases []jsonCase) {
	t.Helper()
	s := baseSession(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rejectAppend(t, s, blobIn(c.data), code, c.parts...)
			rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv("ext/blob", c.data, `,"ignorable":true`)), sdk.CodeCorruptLog, code, 2)
		})
	}
}

func TestCodeJSONSyntax(t *testing.T) {
	runJSONCases(t, sdk.CodeJSONSyntax, []jsonCase{
		{"NaN", `NaN`, []string{`"NaN"`, "offset 0"}},
		{"Infinity", `[Infinity]`, []string{"Infinity", "offset 1"}},
		{"plus sign", `{"a":+1}`, []string{"+1"}},
		{"leading zero", `[01]`, []string{"01", "leading zero"}},
		{"trailing comma", `{"a":1,}`, []string{"offset 7"}},
		{"missing comma", `[1 2]`, []string{"offset 3"}},
		{"trailing data", `{"a":1} x`, []string{"trailing", "offset 8"}},
		{"two values", `1 2`, []string{"trailing", "offset 2"}},
		{"comment", `[1/*c*/]`, []string{"offset 2"}},
		{"single quotes", `['a']`, []string{"offset 1"}},
		{"bad literal", `[tru]`, []string{`"tru"`}},
		{"bad escape", `["\x"]`, []string{"offset"}},
		{"bad hex", `["\u12G4"]`, []string{"offset"}},
		{"unterminated string", `["abc`, []string{"end of input"}},
		{"unclosed array", `[1,2`, []string{"end of input"}},
		{"raw control character", "[\"a\tb\"]", []string{"offset"}},
		{"empty", ` `, []string{"end of input"}},
	})
	s := baseSession(t)
	// Empty but present Data is not "no data".
	rejectAppend(t, s, AppendInput{Type: "ext/blob", Ignorable: true, Data: json.RawMessage{}}, sdk.CodeJSONSyntax, "end of input")
	// A stored line that is not JSON at all.
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv([]byte(`{"seq":2,`)), sdk.CodeCorruptLog, sdk.CodeJSONSyntax, 2, "end of input")
}

func TestCodeJSONInvalidUTF8(t *testing.T) {
	runJSONCases(t, sdk.CodeJSONInvalidUTF8, []jsonCase{
		{"0xFF in a string", "\"a\xffb\"", []string{"offset 2"}},
		{"0xFF outside a string", "[1,\xff]", []string{"offset 3"}},
		{"overlong encoding", "\"\xc0\x80\"", []string{"offset 1"}},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", []string{"offset 1"}},
		{"truncated sequence", "\"\xe2\x82\"", []string{"offset 1"}},
		{"invalid byte in a member name", "{\"\xfe\":1}", []string{"offset 2"}},
		{"lone high surrogate", `"\ud800"`, []string{"offset"}},
		{"lone low surrogate", `"\udc00"`, []string{"offset"}},
		{"high surrogate then letter", `"\ud800\u0041"`, []string{"offset"}},
		{"reversed pair", `"\udc00\ud800"`, []string{"offset"}},
		{"high surrogate at end of string", `["x\udbff"]`, []string{"offset"}},
	})
	// A valid pair is accepted and stored as UTF-8.
	s := baseSession(t)
	e := mustAppend(t, s, blobIn(`"\ud83d\ude00"`))
	if string(e.Data()) != "\"😀\"" {
		t.Errorf("surrogate pair stored as %q", e.Data())
	}
}

func TestCodeJSONDuplicateKey(t *testing.T) {
	var many strings.Builder
	many.WriteString("{")
	for i := range 200 {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	many.WriteString(`"k137":0}`)
	runJSONCases(t, sdk.CodeJSONDuplicateKey, []jsonCase{
		{"plain", `{"a":1,"a":2}`, []string{`"a"`}},
		{"escaped equal", `{"a":1,"\u0061":2}`, []string{`"a"`}},
		{"nested pointer", `{"x":[{"b":{"q":1,"q":2}}]}`, []string{`"q"`, "/x/0/b"}},
		{"large object", many.String(), []string{`"k137"`}},
		{"empty name", `{"":1,"":2}`, []string{`""`}},
	})
	// Duplicate envelope members are a JSON error before any envelope rule.
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv([]byte(fmt.Sprintf(`{"seq":2,"seq":2,"time":%d,"type":"ext/blob","data":1,"ignorable":true}`, tT0))),
		sdk.CodeCorruptLog, sdk.CodeJSONDuplicateKey, 2, `"seq"`)
	// Distinct names that differ only after unescaping are fine.
	s := baseSession(t)
	mustAppend(t, s, blobIn(`{"a":1,"\u0062":2,"A":3}`))
}

func TestCodeJSONNegativeZero(t *testing.T) {
	runJSONCases(t, sdk.CodeJSONNegativeZero, []jsonCase{
		{"-0", `[-0]`, []string{`"-0"`, `"/0"`}},
		{"-0.0", `{"a":-0.0}`, []string{`"-0.0"`, `"/a"`}},
		{"-0e7", `-0e7`, []string{`"-0e7"`}},
		{"-0.0e3", `-0.0e3`, []string{`"-0.0e3"`}},
		{"underflow to -0", `{"x":{"y":-1e-400}}`, []string{`"-1e-400"`, `"/x/y"`}},
	})
}

func TestCodeJSONNumberNotFinite(t *testing.T) {
	runJSONCases(t, sdk.CodeJSONNumberNotFinite, []jsonCase{
		{"1e400", `1e400`, []string{`"1e400"`}},
		{"negative overflow", `{"n":[-1.8e309]}`, []string{`"-1.8e309"`, `"/n/0"`}},
		{"long mantissa overflow", `1` + strings.Repeat("0", 400), []string{"1000"}},
	})
	s := baseSession(t)
	mustAppend(t, s, blobIn(`[1e-400, 1.7976931348623157e308]`))
}

func TestCodeJSONUnsafeInteger(t *testing.T) {
	runJSONCases(t, sdk.CodeJSONUnsafeInteger, []jsonCase{
		{"2^53", `9007199254740992`, []string{`"9007199254740992"`}},
		{"-2^53", `{"a":-9007199254740992}`, []string{`"-9007199254740992"`, `"/a"`}},
		{"huge", `[0,12345678901234567890123]`, []string{`"12345678901234567890123"`, `"/1"`}},
	})
	s := baseSession(t)
	e := mustAppend(t, s, blobIn(`[9007199254740991,-9007199254740991,9007199254740992.0,1e16]`))
	if string(e.Data()) != `[9007199254740991,-9007199254740991,9007199254740992.0,1e16]` {
		t.Errorf("stored %s", e.Data())
	}
}

func TestCodeJSONTooDeep(t *testing.T) {
	nest := func(open, close string, n int) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	runJSONCases(t, sdk.CodeJSONTooDeep, []jsonCase{
		{"513 arrays", nest("[", "]", 513), []string{strings.Repeat("/0", 512)}},
		{"513 objects", strings.Repeat(`{"a":`, 513) + "1" + strings.Repeat("}", 513), []string{strings.Repeat("/a", 512)}},
		{"10000 arrays", nest("[", "]", 10_000), []string{strings.Repeat("/0", 512)}},
		{"10000 unclosed", strings.Repeat("[", 10_000), nil},
	})
	s := baseSession(t)
	mustAppend(t, s, blobIn(nest("[", "]", 512)))
	// Replay = live: a 512-deep data restores (the envelope is not counted).
	requireReplayEqual(t, s)
}

func TestCodeEventTooLarge(t *testing.T) {
	small := func(o *Options) { o.MaxEventBytes = sdk.MinMaxEventBytes }
	s := baseSession(t, small)
	// J1: raw input over 2 × MaxEventBytes, whatever it contains.
	rejectAppend(t, s, blobIn(`"`+strings.Repeat("x", 2047)+`"`), sdk.CodeEventTooLarge, "2049", "2048", "ext/blob")
	// J10: canonical envelope over MaxEventBytes.
	rejectAppend(t, s, blobIn(`"`+strings.Repeat("x", 1000)+`"`), sdk.CodeEventTooLarge, "1024", "ext/blob")
	rejectAppend(t, s, evU("u9", strings.Repeat("y", 1000)), sdk.CodeEventTooLarge, "1024", "user/message")
	// Whitespace counts for J1 only: within 2 × and canonically small is fine.
	e := mustAppend(t, s, blobIn(strings.Repeat(" ", 1500)+`[1]`+strings.Repeat("\n", 400)))
	if string(e.Data()) != `[1]` {
		t.Errorf("stored %q", e.Data())
	}
	// Restore: the same caps.
	rejectRestore(t, restoreOpts(small), RestoreOptions{}, withEnv(rawEnv("ext/blob", `"`+strings.Repeat("x", 2100)+`"`, `,"ignorable":true`)),
		sdk.CodeCorruptLog, sdk.CodeEventTooLarge, 2, "2048")
	rejectRestore(t, restoreOpts(small), RestoreOptions{}, withEnv(rawEnv("ext/blob", `"`+strings.Repeat("x", 1000)+`"`, `,"ignorable":true`)),
		sdk.CodeCorruptLog, sdk.CodeEventTooLarge, 2, "1024", "ext/blob")
}

func TestCodeConfigInvalid(t *testing.T) {
	for _, n := range []int{sdk.MinMaxEventBytes - 1, sdk.MaxMaxEventBytes + 1, -5} {
		_, err := New(Options{MaxEventBytes: n})
		requireDetail(t, requireCode(t, err, sdk.CodeConfigInvalid), fmt.Sprint(n))
		_, err = Restore(context.Background(), Options{MaxEventBytes: n}, RestoreOptions{}, nil)
		requireCode(t, err, sdk.CodeConfigInvalid)
	}
}

func TestCodeEnvelopeInvalid(t *testing.T) {
	ts := fmt.Sprint(tT0)
	for _, c := range []struct {
		name, line string
		parts      []string
	}{
		{"missing seq", `{"time":` + ts + `,"type":"turn/end","data":{}}`, []string{`"seq"`, "missing"}},
		{"missing time", `{"seq":2,"type":"turn/end","data":{}}`, []string{`"time"`, "missing"}},
		{"missing type", `{"seq":2,"time":` + ts + `,"data":{}}`, []string{`"type"`, "missing"}},
		{"missing data", `{"seq":2,"time":` + ts + `,"type":"turn/end"}`, []string{`"data"`, "missing"}},
		{"extra member", `{"seq":2,"time":` + ts + `,"type":"turn/end","data":{},"extra":1}`, []string{`"extra"`}},
		{"case differs", `{"seq":2,"time":` + ts + `,"type":"turn/end","Data":{}}`, []string{`"Data"`}},
		{"ignorable false", `{"seq":2,"time":` + ts + `,"type":"ext/blob","data":{},"ignorable":false}`, []string{`"ignorable"`, "false"}},
		{"ignorable string", `{"seq":2,"time":` + ts + `,"type":"ext/blob","data":{},"ignorable":"true"}`, []string{`"ignorable"`, `"true"`}},
		{"ignorable null", `{"seq":2,"time":` + ts + `,"type":"ext/blob","data":{},"ignorable":null}`, []string{`"ignorable"`, "null"}},
		{"type number", `{"seq":2,"time":` + ts + `,"type":5,"data":{}}`, []string{`"type"`, "5"}},
		{"type null", `{"seq":2,"time":` + ts + `,"type":null,"data":{}}`, []string{`"type"`, "null"}},
		{"seq fraction", `{"seq":1.5,"time":` + ts + `,"type":"turn/end","data":{}}`, []string{`"seq"`, "1.5"}},
		{"seq integral fraction", `{"seq":2.0,"time":` + ts + `,"type":"turn/end","data":{}}`, []string{`"seq"`, "2.0"}},
		{"seq exponent", `{"seq":2e0,"time":` + ts + `,"type":"turn/end","data":{}}`, []string{`"seq"`, "2e0"}},
		{"seq string", `{"seq":"2","time":` + ts + `,"type":"turn/end","data":{}}`, []string{`"seq"`, `"2"`}},
		{"seq negative", `{"seq":-1,"time":` + ts + `,"type":"turn/end","data":{}}`, []string{`"seq"`, "-1"}},
		{"seq null", `{"seq":null,"time":` + ts + `,"type":"turn/end","data":{}}`, []string{`"seq"`, "null"}},
		{"time negative", `{"seq":2,"time":-5,"type":"turn/end","data":{}}`, []string{`"time"`, "-5"}},
		{"time fraction", `{"seq":2,"time":1.25,"type":"turn/end","data":{}}`, []string{`"time"`, "1.25"}},
		{"not an object", `[2,0,"turn/end",{}]`, []string{"object"}},
		{"a string", `"turn/end"`, []string{"object"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv([]byte(c.line)), sdk.CodeCorruptLog, sdk.CodeEnvelopeInvalid, 2, c.parts...)
			rejectRestore(t, restoreOpts(), RestoreOptions{Source: FromSeed}, withEnv([]byte(c.line)), sdk.CodeSeedInvalid, sdk.CodeEnvelopeInvalid, 2, c.parts...)
			_, err := ParseEnvelope([]byte(c.line), 0)
			requireCode(t, err, sdk.CodeEnvelopeInvalid)
		})
	}
	// Member order is free; the result is canonical.
	s, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, withEnv([]byte(`{"data":{"turn":1,"reason":{"kind":"completed"}},"type":"turn/end","time":7,"seq":2}`)))
	if err != nil {
		t.Fatalf("Restore with free member order: %v", err)
	}
	if e, _ := s.Event(2); string(e.Envelope()) != `{"seq":2,"time":7,"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}` {
		t.Errorf("canonical envelope = %s", e.Envelope())
	}
}

func TestCodeEventTypeInvalid(t *testing.T) {
	s := baseSession(t)
	long := "a/" + strings.Repeat("b", 127)
	for _, typ := range []string{"", "turn", "Turn/start", "turn/", "turn//x", "1turn/x", "turn/X", "-a/b", "a b/c", "a/.b", "turn/start/", long, "projection:test", "projection:Bad/x", "plugin:notes", "plugin:/x", "plugin:notes/", "ü/x"} {
		t.Run(typ, func(t *testing.T) {
			in := AppendInput{Type: typ, Data: tcRaw(`{}`), Ignorable: true}
			rejectAppend(t, s, in, sdk.CodeEventTypeInvalid, typ)
			rejectAppend(t, s, AppendInput{Type: typ, Data: tcRaw(`{}`)}, sdk.CodeEventTypeInvalid)
		})
	}
	// 128 bytes is the limit.
	mustAppend(t, s, AppendInput{Type: "a/" + strings.Repeat("b", 126), Data: tcRaw(`{}`), Ignorable: true})
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv("Bad/Type", `{}`, `,"ignorable":true`)), sdk.CodeCorruptLog, sdk.CodeEventTypeInvalid, 2, "Bad/Type")
}

func TestCodeEventTypeReserved(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evRaw(TypeSessionEndSeed, `{}`), sdk.CodeEventTypeReserved, TypeSessionEndSeed)
	rejectAppend(t, s, evRaw(TypeSessionEndSeed, `{"inherited":true}`), sdk.CodeEventTypeReserved, TypeSessionEndSeed)
	rejectAppend(t, s, evRaw(TypeSessionRecovered, `{"tornBytes":1,"tornFromSeq":0}`), sdk.CodeEventTypeReserved, TypeSessionRecovered)
	rejectAppend(t, s, evRaw(TypeSessionSalvaged, `{"salvagedFrom":"a","damagedAtOffset":1,"damagedBytes":2,"intactEventsExcluded":0,"artifact":"/x"}`), sdk.CodeEventTypeReserved, TypeSessionSalvaged)
	rejectAppend(t, s, AppendInput{Type: TypeSessionEndSeed, Data: tcRaw(`{}`), Ignorable: true}, sdk.CodeEventTypeReserved)
	// The store writes them; restore reads them.
	envs := withEnv(envLine(2, TypeSessionRecovered, `{"tornBytes":1,"tornFromSeq":2}`, ""), envLine(3, TypeSessionEndSeed, `{}`, ""),
		envLine(4, TypeSessionSalvaged, `{"salvagedFrom":"a","damagedAtOffset":1,"damagedBytes":2,"intactEventsExcluded":0,"artifact":"/x"}`, ""))
	if _, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, envs); err != nil {
		t.Errorf("Restore of store-written types: %v", err)
	}
}

func TestCodeUnknownEventType(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evRaw("custom/thing", `{}`), sdk.CodeUnknownEventType, `"custom/thing"`)
	rejectAppend(t, s, evRaw("turn/begin", `{"turn":1}`), sdk.CodeUnknownEventType, `"turn/begin"`)
	// Ignorable: class U, accepted and opaque.
	mustAppend(t, s, AppendInput{Type: "custom/thing", Data: tcRaw(`{}`), Ignorable: true})
	// A type a loaded plugin declares is known (class P).
	p := baseSession(t, func(o *Options) { o.PluginTypes = map[string]bool{"custom/thing": false} })
	mustAppend(t, p, evRaw("custom/thing", `{"anything":[1]}`))
}

func TestCodeIgnorableNotAllowed(t *testing.T) {
	defs := ProjectionMap{redactType: &fakeProjection{id: "r", project: redactTo(nil)}}
	s := baseSession(t, func(o *Options) {
		o.PluginTypes = map[string]bool{"lint/report": false, "lint/note": true}
		o.Projections = defs
	})
	for _, in := range []AppendInput{
		{Type: TypeUserMessage, Data: tcRaw(dataUser("u", "x")), SurfaceOp: opAppend(), Ignorable: true},
		{Type: TypeTurnStart, Data: tcRaw(`{"turn":2}`), Ignorable: true},
		{Type: TypeTodoWrite, Data: tcRaw(`{"todos":[]}`), Ignorable: true},
		{Type: "lint/report", Data: tcRaw(`{}`), Ignorable: true},
		{Type: redactType, Data: tcRaw(`{"targets":[2],"text":"x"}`), Ignorable: true},
	} {
		t.Run(in.Type, func(t *testing.T) {
			rejectAppend(t, s, in, sdk.CodeIgnorableNotAllowed, in.Type)
		})
	}
	mustAppend(t, s, AppendInput{Type: "lint/note", Data: tcRaw(`{}`), Ignorable: true})
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, `,"ignorable":true`)),
		sdk.CodeCorruptLog, sdk.CodeIgnorableNotAllowed, 2, TypeTurnEnd)
	rejectRestore(t, restoreOpts(func(o *Options) { o.PluginTypes = map[string]bool{"lint/report": false} }), RestoreOptions{}, withEnv(rawEnv("lint/report", `{}`, `,"ignorable":true`)),
		sdk.CodeCorruptLog, sdk.CodeIgnorableNotAllowed, 2, "lint/report")
}

func TestCodeIgnorableRequired(t *testing.T) {
	s := baseSession(t, func(o *Options) { o.PluginTypes = map[string]bool{"lint/note": true} })
	rejectAppend(t, s, evRaw("plugin:notes/entry", `{}`), sdk.CodeIgnorableRequired, "plugin:notes/entry")
	rejectAppend(t, s, evRaw("lint/note", `{}`), sdk.CodeIgnorableRequired, "lint/note")
	e, err := s.AppendPluginRecord(context.Background(), "notes", "entry/sub", tcRaw(`{"k":1}`))
	if err != nil || !e.Ignorable() || e.Type() != "plugin:notes/entry/sub" {
		t.Errorf("AppendPluginRecord = %s, %v", e.Envelope(), err)
	}
	rejectRestore(t, restoreOpts(func(o *Options) { o.PluginTypes = map[string]bool{"lint/note": true} }), RestoreOptions{}, withEnv(rawEnv("lint/note", `{}`, "")),
		sdk.CodeCorruptLog, sdk.CodeIgnorableRequired, 2, "lint/note")
}

func TestCodePayloadInvalid(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, AppendInput{Type: TypeTurnStart}, sdk.CodePayloadInvalid, "turn/start")
	for _, c := range []struct {
		in    AppendInput
		parts []string
	}{
		{evRaw(TypeTurnStart, `{"turn":2,"extra":1}`), []string{"extra"}},
		{evRaw(TypeTurnStart, `{"turn":-1}`), []string{"turn", "-1"}},
		{evRaw(TypeTurnStart, `{"turn":1.5}`), []string{"turn", "1.5"}},
		{evRaw(TypeTurnStart, `{}`), []string{"turn", "missing"}},
		{evRaw(TypeTurnStart, `[1]`), []string{"object"}},
		{evRaw(TypeTurnEnd, `{"turn":1,"reason":{"kind":"finished"}}`), []string{`"finished"`}},
		{evRaw(TypeStepEnd, `{"turn":1}`), []string{"step"}},
		{evRaw(TypeToolCall, `{"turn":1,"step":1,"callId":"c","name":"n","arguments":{}}`), []string{"arguments"}},
		{evRaw(TypeTodoWrite, `{"todos":[{"content":"a","status":"done"}]}`), []string{`"done"`}},
		{evRaw(TypeRequestContext, `{"provider":"p"}`), []string{"model"}},
		{AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"id":"","role":"user","content":[],"source":{"kind":"k"}}`)}, []string{"id"}},
		{AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"id":"u","role":"user","content":[{"type":"video"}],"source":{"kind":"k"}}`)}, []string{`"video"`}},
		{AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"id":"u","role":"user","content":[],"source":{}}`)}, []string{"kind"}},
		{AppendInput{Type: TypeAssistantMessage, SurfaceOp: opAppend(), Data: tcRaw(dataAsst(1, 1, "a", `{"type":"image","mediaType":"image/png","data":"AAAA"}`))}, []string{`"image"`}},
		{AppendInput{Type: TypeAssistantMessage, SurfaceOp: opAppend(), Data: tcRaw(dataAsst(1, 1, "a", blockCall("x")+","+blockCall("x")))}, []string{`"x"`, "duplicate"}},
	} {
		t.Run(string(c.in.Data), func(t *testing.T) {
			rejectAppend(t, s, c.in, sdk.CodePayloadInvalid, c.parts...)
		})
	}
	// request/header: unlisted members are PAYLOAD_INVALID, after the header rows.
	rejectAppend(t, s, evRaw(TypeRequestHeader, `{"header":{"config":{"provider":"p","model":"m"},"foo":1},"reason":"change"}`), sdk.CodePayloadInvalid, "foo")
	rejectAppend(t, s, evRaw(TypeRequestHeader, `{"header":`+plainHeader+`,"reason":"change","bar":1}`), sdk.CodePayloadInvalid, "bar")
	rejectAppend(t, s, evRaw(TypeRequestHeader, `{"header":{"config":{"provider":"p","model":"m"},"foo":1,"tools":[]},"reason":"change"}`), sdk.CodeHeaderEmptyTools)
	rejectAppend(t, s, evRaw(TypeRequestHeader, `{"header":`+plainHeader+`,"reason":"initial","bar":1}`), sdk.CodeHeaderReasonInvalid)
	rejectAppend(t, s, evRaw(TypeRequestHeader, `{"reason":"change"}`), sdk.CodePayloadInvalid, "header")
	// Restore runs the same event-local rules.
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeTurnEnd, `{"turn":1}`, "")), sdk.CodeCorruptLog, sdk.CodePayloadInvalid, 2, "reason")
}

func TestCodeMessageRoleMismatch(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"id":"u","role":"assistant","content":[],"source":{"kind":"k"}}`)},
		sdk.CodeMessageRoleMismatch, `"assistant"`, `"user"`)
	rejectAppend(t, s, AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"id":"u","role":"developer","content":[],"source":{"kind":"k"}}`)},
		sdk.CodeMessageRoleMismatch, `"developer"`)
	rejectAppend(t, s, AppendInput{Type: TypeToolResult, SurfaceOp: opAppend(), Data: tcRaw(`{"turn":1,"step":1,"message":{"id":"r","role":"user","toolCallId":"c","content":[],"source":{"kind":"tool","callId":"c"}}}`)},
		sdk.CodeMessageRoleMismatch, `"user"`, `"tool"`)
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeUserMessage, `{"id":"u","role":"system","content":[],"source":{"kind":"k"}}`, `,"surfaceOp":"append"`)),
		sdk.CodeCorruptLog, sdk.CodeMessageRoleMismatch, 2, `"system"`)
}

func TestCodeMessageSourceInvalid(t *testing.T) {
	s := baseSession(t)
	asst := func(source string) AppendInput {
		return AppendInput{Type: TypeAssistantMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[],"source":` + source + `},"stream":[]}`)}
	}
	rejectAppend(t, s, asst(`{"kind":"user"}`), sdk.CodeMessageSourceInvalid, `"user"`, `"model"`)
	rejectAppend(t, s, asst(`{"kind":"model","provider":"","model":"m"}`), sdk.CodeMessageSourceInvalid, "provider")
	rejectAppend(t, s, asst(`{"kind":"model","provider":"p"}`), sdk.CodeMessageSourceInvalid, "model")
	rejectAppend(t, s, AppendInput{Type: TypeToolResult, SurfaceOp: opAppend(), Data: tcRaw(`{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"c","content":[],"source":{"kind":"tool","callId":""}}}`)},
		sdk.CodeMessageSourceInvalid, "callId")
	rejectAppend(t, s, AppendInput{Type: TypeSystemMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"turn":0,"step":0,"message":{"id":"s","role":"system","content":[],"source":{"kind":"prompt"}}}`)},
		sdk.CodeMessageSourceInvalid, `"prompt"`, `"system-prompt"`)
	rejectAppend(t, s, AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"id":"u","role":"user","content":[],"source":{"kind":"compact-checkpoint"}}`)},
		sdk.CodeMessageSourceInvalid, "compactionId")
}

func TestCodeToolCallIDMismatch(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, AppendInput{Type: TypeToolResult, SurfaceOp: opAppend(), Data: tcRaw(`{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"c1","content":[],"source":{"kind":"tool","callId":"c2"}}}`)},
		sdk.CodeToolCallIDMismatch, `"c1"`, `"c2"`)
}

func TestCodeToolResultErrorWithoutIsError(t *testing.T) {
	s := baseSession(t)
	data := func(isError string) string {
		return `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"c2",` + isError + `"content":[],"source":{"kind":"tool","callId":"c2"}},"error":{"name":"E","code":"X"}}`
	}
	mustAppend(t, s, evACalls(1, 1, "a9", "c2"))
	rejectAppend(t, s, AppendInput{Type: TypeToolResult, SurfaceOp: opAppend(), Data: tcRaw(data(""))}, sdk.CodeToolResultErrorWithoutIserror, "isError", "missing")
	rejectAppend(t, s, AppendInput{Type: TypeToolResult, SurfaceOp: opAppend(), Data: tcRaw(data(`"isError":false,`))}, sdk.CodeToolResultErrorWithoutIserror, "isError", "false")
	mustAppend(t, s, AppendInput{Type: TypeToolResult, SurfaceOp: opAppend(), Data: tcRaw(data(`"isError":true,`))})
}

func TestCodeToolChangeRole(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"id":"u","role":"user","content":[` + blockAddition("search") + `],"source":{"kind":"k"}}`)},
		sdk.CodeToolChangeRole, `"tool-addition"`, "user/message")
	rejectAppend(t, s, AppendInput{Type: TypeAssistantMessage, SurfaceOp: opAppend(), Data: tcRaw(dataAsst(1, 1, "a", blockRemoval("read")))},
		sdk.CodeToolChangeRole, `"tool-removal"`, "assistant/message")
}

func TestCodeToolChangeNameEmpty(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evDeveloper("d", -1, blockRemoval("")), sdk.CodeToolChangeNameEmpty, "toolName")
	rejectAppend(t, s, evDeveloper("d", 1, blockAddition("")), sdk.CodeToolChangeNameEmpty, "toolName")
}

func TestCodeToolAdditionInlineDefinition(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evDeveloper("d", 1, `{"type":"tool-addition","toolName":"search","tool":{"name":"search"}}`), sdk.CodeToolAdditionInlineDefinition, "tool")
}

func TestCodeHeaderSystemForbidden(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evHeader("change", `{"config":{"provider":"p","model":"m"},"system":"You are"}`), sdk.CodeHeaderSystemForbidden, "system")
	// It outranks the other header rules.
	rejectAppend(t, s, evHeader("bogus", `{"system":null,"tools":[]}`), sdk.CodeHeaderSystemForbidden, "system")
}

func TestCodeHeaderEmptyTools(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evHeader("change", `{"config":{"provider":"p","model":"m"},"tools":[]}`), sdk.CodeHeaderEmptyTools, "tools")
}

func TestCodeHeaderEmptyAdapterDefaults(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evHeader("change", `{"config":{"provider":"p","model":"m"},"adapterDefaults":{}}`), sdk.CodeHeaderEmptyAdapterDefaults, "adapterDefaults")
}

func TestCodeHeaderInvalid(t *testing.T) {
	s := baseSession(t)
	for _, c := range []struct {
		name, header string
		parts        []string
	}{
		{"no config", `{"tools":[` + readTool + `]}`, []string{"config"}},
		{"config not an object", `{"config":"p/m"}`, []string{"config"}},
		{"empty provider", `{"config":{"provider":"","model":"m"}}`, []string{"provider"}},
		{"missing model", `{"config":{"provider":"p"}}`, []string{"model"}},
		{"empty reasoningEffort", `{"config":{"provider":"p","model":"m","reasoningEffort":""}}`, []string{"reasoningEffort"}},
		{"flag without config value", `{"config":{"provider":"p","model":"m"},"adapterDefaults":{"maxTokens":true}}`, []string{"maxTokens"}},
		{"flag false", `{"config":{"provider":"p","model":"m","maxTokens":5},"adapterDefaults":{"maxTokens":false}}`, []string{"maxTokens", "false"}},
		{"unknown flag", `{"config":{"provider":"p","model":"m"},"adapterDefaults":{"temperature":true}}`, []string{"temperature"}},
		{"duplicate tool", `{"config":{"provider":"p","model":"m"},"tools":[` + readTool + `,` + readTool + `]}`, []string{`"read"`}},
		{"tool without name", `{"config":{"provider":"p","model":"m"},"tools":[{"description":"d"}]}`, []string{"name"}},
		{"tools not an array", `{"config":{"provider":"p","model":"m"},"tools":{"read":{}}}`, []string{"tools"}},
		{"deferLoading false", `{"config":{"provider":"p","model":"m"},"tools":[{"name":"s","deferLoading":false}]}`, []string{"deferLoading"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rejectAppend(t, s, evHeader("change", c.header), sdk.CodeHeaderInvalid, c.parts...)
		})
	}
	rejectAppend(t, s, evRaw(TypeRequestHeader, `{"header":`+plainHeader+`,"reason":"change","startsSeries":false}`), sdk.CodeHeaderInvalid, "startsSeries", "false")
}

func TestCodeHeaderReasonInvalid(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evHeader("initial", plainHeader), sdk.CodeHeaderReasonInvalid, `"initial"`)
	rejectAppend(t, s, evHeader("restart", plainHeader), sdk.CodeHeaderReasonInvalid, `"restart"`)
	rejectAppend(t, s, evRaw(TypeRequestHeader, `{"header":`+plainHeader+`}`), sdk.CodeHeaderReasonInvalid, "reason")
	fresh, _ := newTestSession(t)
	for _, r := range []string{"resume", "change", "series"} {
		rejectAppend(t, fresh, evHeader(r, plainHeader), sdk.CodeHeaderReasonInvalid, `"`+r+`"`)
	}
	// Restore: a first header that is not "initial" is corrupt.
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeRequestHeader, `{"header":`+plainHeader+`,"reason":"change"}`, "")),
		sdk.CodeCorruptLog, sdk.CodeHeaderReasonInvalid, 2, `"change"`)
	// A window cannot see earlier headers, so it accepts one.
	w := NewSurface(2, nil)
	ev, err := ParseEnvelope(rawEnv(TypeRequestHeader, `{"header":`+plainHeader+`,"reason":"change"}`, ""), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(context.Background(), ev); err != nil {
		t.Errorf("window Apply of a change header: %v", err)
	}
}

func TestCodeDeveloperHeaderSeqMismatch(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evDeveloper("d", -1, blockText("x"), blockAddition("search")), sdk.CodeDeveloperHeaderSeqMismatch, `"search"`, "content[1]")
	rejectAppend(t, s, evDeveloper("d", 1, blockRemoval("read")), sdk.CodeDeveloperHeaderSeqMismatch, "headerSeq", "1")
	rejectAppend(t, s, evDeveloper("d", 1, blockText("only text")), sdk.CodeDeveloperHeaderSeqMismatch, "headerSeq")
	mustAppend(t, s, evDeveloper("d", -1, blockRemoval("read")))
}

func TestCodeDeveloperHeaderSeqInvalid(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evDeveloper("d", 0, blockAddition("search")), sdk.CodeDeveloperHeaderSeqInvalid, "headerSeq 0", "turn/start")
	rejectAppend(t, s, evDeveloper("d", 6, blockAddition("search")), sdk.CodeDeveloperHeaderSeqInvalid, "headerSeq 6", "tool/result")
	rejectAppend(t, s, evDeveloper("d", 9, blockAddition("search")), sdk.CodeDeveloperHeaderSeqInvalid, "headerSeq 9", "seq 9")
	rejectAppend(t, s, evDeveloper("d", sdk.MaxSeq, blockAddition("search")), sdk.CodeDeveloperHeaderSeqInvalid, "9007199254740991")
	// A headerSeq outside the Seq domain is a shape error of the payload.
	rejectAppend(t, s, evDeveloper("d", -1, blockAddition("search")), sdk.CodeDeveloperHeaderSeqMismatch)
	rejectAppend(t, s, AppendInput{Type: TypeDeveloperMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"turn":1,"step":1,"message":{"id":"d","role":"developer","content":[` + blockAddition("search") + `],"source":{"kind":"k"}},"headerSeq":-1}`)},
		sdk.CodePayloadInvalid, "headerSeq")
}

func TestCodeDeveloperToolNotInHeader(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evDeveloper("d", 1, blockAddition("search"), blockAddition("write")), sdk.CodeDeveloperToolNotInHeader, `"write"`, "headerSeq 1", "found 0")
	mustAppend(t, s, evHeader("change", plainHeader)) // 9, no tools
	rejectAppend(t, s, evDeveloper("d", 9, blockAddition("search")), sdk.CodeDeveloperToolNotInHeader, `"search"`, "headerSeq 9", "found 0")
}

func TestCodeDeveloperToolIncomplete(t *testing.T) {
	s := baseSession(t)
	mustAppend(t, s, evHeader("change", `{"config":{"provider":"p","model":"m"},"tools":[{"name":"bare"},{"name":"half","description":"d"}]}`)) // 9
	rejectAppend(t, s, evDeveloper("d", 9, blockAddition("bare")), sdk.CodeDeveloperToolIncomplete, `"bare"`, "headerSeq 9")
	rejectAppend(t, s, evDeveloper("d", 9, blockAddition("half")), sdk.CodeDeveloperToolIncomplete, `"half"`, "headerSeq 9")
}

// TestCodeDeveloperToolDeferLoading: a header whose tool has deferLoading
// other than true never enters a log — docs/format.md allows only `deferLoading: true`,
// so append and restore stop it as HEADER_INVALID first. The rule of docs/format.md
// step 4 is therefore checked by planting such a header past validation.
func TestCodeDeveloperToolDeferLoading(t *testing.T) {
	bad := `{"header":{"config":{"provider":"p","model":"m"},"tools":[{"name":"search","description":"d","parameters":{},"deferLoading":false}]},"reason":"initial"}`
	s, _ := newTestSession(t)
	rejectAppend(t, s, evRaw(TypeRequestHeader, bad), sdk.CodeHeaderInvalid, "deferLoading")
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeRequestHeader, bad, "")), sdk.CodeCorruptLog, sdk.CodeHeaderInvalid, 2, "deferLoading")

	h := mustEvent(0, tT0, TypeRequestHeader, []byte(bad), nil)
	rec := *h.r
	rec.cls = classL
	s.stateMu.Lock()
	s.commit(&rec, plan{kind: planNone})
	s.publish()
	s.stateMu.Unlock()
	mustAppendAll(t, s, evTurnStart(1), evStepStart(1, 1))
	rejectAppend(t, s, evDeveloper("d", 0, blockAddition("search")), sdk.CodeDeveloperToolDeferLoading, `"search"`, "false")
}

func TestCodeSeqNotContiguous(t *testing.T) {
	ev := func(seq int) []byte { return envLine(seq, TypeTurnStart, fmt.Sprintf(`{"turn":%d}`, seq), "") }
	for _, c := range []struct {
		name  string
		envs  [][]byte
		index int
		parts []string
	}{
		{"gap", [][]byte{ev(0), ev(2)}, 1, []string{"seq 2", "expected next seq 1"}},
		{"repeat", [][]byte{ev(0), ev(1), ev(1)}, 2, []string{"seq 1", "seq 2"}},
		{"not from zero", [][]byte{ev(1)}, 0, []string{"seq 1", "seq 0"}},
		{"backwards", [][]byte{ev(0), ev(1), ev(0)}, 2, []string{"seq 0", "seq 2"}},
		{"forged far", [][]byte{ev(0), envLine(sdk.MaxSeq, TypeTurnStart, `{"turn":1}`, "")}, 1, []string{"9007199254740991", "seq 1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rejectRestore(t, restoreOpts(), RestoreOptions{}, c.envs, sdk.CodeCorruptLog, sdk.CodeSeqNotContiguous, c.index, c.parts...)
			rejectRestore(t, restoreOpts(), RestoreOptions{Source: FromSeed}, c.envs, sdk.CodeSeedInvalid, sdk.CodeSeqNotContiguous, c.index, c.parts...)
		})
	}
	s := baseSession(t)
	events := s.Events().Slice()
	_, err := RestoreEvents(context.Background(), restoreOpts(), RestoreOptions{}, append(events[:3:3], events[4:]...))
	requireDetail(t, requireCode(t, err, sdk.CodeSeqNotContiguous), "seq 4", "seq 3")
	_, err = Fold(context.Background(), events[1:], nil)
	if e := requireCode(t, err, sdk.CodeSeqNotContiguous); e.Index == nil || *e.Index != 0 {
		t.Errorf("Fold error %v; want index 0", e)
	}
	w := NewSurface(3, nil)
	err = w.Apply(context.Background(), events[4])
	requireDetail(t, requireCode(t, err, sdk.CodeSeqNotContiguous), "seq 4", "seq 3")
}

func TestCodeSurfaceOpNotAllowed(t *testing.T) {
	defs := ProjectionMap{redactType: &fakeProjection{id: "r", project: redactTo(nil)}}
	s := baseSession(t, func(o *Options) {
		o.PluginTypes = map[string]bool{"lint/report": false}
		o.Projections = defs
	})
	for _, in := range []AppendInput{
		{Type: TypeStepEnd, Data: tcRaw(`{"turn":1,"step":1}`), SurfaceOp: opAppend()},
		{Type: TypeAssistantAttempt, Data: tcRaw(`{"turn":1,"step":1,"stream":[]}`), SurfaceOp: opReplace(6, 6)},
		{Type: TypeRequestHeader, Data: evHeader("change", plainHeader).Data, SurfaceOp: opAppend()},
		{Type: "lint/report", Data: tcRaw(`{}`), SurfaceOp: opAppend()},
		{Type: "plugin:notes/entry", Data: tcRaw(`{}`), SurfaceOp: opAppend(), Ignorable: true},
		{Type: redactType, Data: tcRaw(`{"targets":[2],"text":"x"}`), SurfaceOp: opAppend()},
	} {
		t.Run(in.Type, func(t *testing.T) {
			rejectAppend(t, s, in, sdk.CodeSurfaceOpNotAllowed, in.Type)
		})
	}
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeSessionEndSeed, `{}`, `,"surfaceOp":"append"`)), sdk.CodeCorruptLog, sdk.CodeSurfaceOpNotAllowed, 2, TypeSessionEndSeed)
	// S2b precedes S2e: a malformed op on a log-only type is still "not allowed".
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, `,"surfaceOp":"bogus"`)), sdk.CodeCorruptLog, sdk.CodeSurfaceOpNotAllowed, 2, TypeTurnEnd)
}

func TestCodeSourcesNotAllowed(t *testing.T) {
	s := baseSession(t, func(o *Options) { o.PluginTypes = map[string]bool{"lint/report": false} })
	rejectAppend(t, s, withSources(evStepEnd(1, 1), 0), sdk.CodeSourcesNotAllowed, TypeStepEnd)
	rejectAppend(t, s, withSources(evRaw(TypeAssistantAttempt, `{"turn":1,"step":1,"stream":[]}`)), sdk.CodeSourcesNotAllowed, TypeAssistantAttempt)
	rejectAppend(t, s, withSources(evRaw("lint/report", `{}`), 2), sdk.CodeSourcesNotAllowed, "lint/report")
	rejectAppend(t, s, withSources(AppendInput{Type: "plugin:notes/entry", Data: tcRaw(`{}`), Ignorable: true}, 1), sdk.CodeSourcesNotAllowed, "plugin:notes/entry")
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, `,"sourceEventSeqs":[1]`)), sdk.CodeCorruptLog, sdk.CodeSourcesNotAllowed, 2, TypeTurnEnd)
}

func TestCodeSurfaceMarkerRequired(t *testing.T) {
	s := baseSession(t)
	for _, in := range []AppendInput{
		{Type: TypeUserMessage, Data: tcRaw(dataUser("u", "x"))},
		{Type: TypeUserMessage, Data: tcRaw(dataUser("u", "x")), SourceEventSeqs: seqList(2)},
		{Type: TypeDeveloperMessage, Data: evDeveloper("d", -1, blockRemoval("read")).Data},
	} {
		rejectAppend(t, s, in, sdk.CodeSurfaceMarkerRequired, in.Type)
	}
	mustAppend(t, s, evACalls(1, 1, "a9", "c2"))
	rejectAppend(t, s, AppendInput{Type: TypeToolResult, Data: tcRaw(dataResult("r", "c2", "x"))}, sdk.CodeSurfaceMarkerRequired, TypeToolResult)
}

// malformedOps are surfaceOp values that are neither "append" nor a
// well-formed replace object (rule S2e), as they may appear in a stored line.
var malformedOps = []string{
	`"replace"`, `"APPEND"`, `""`, `null`, `true`, `1`, `[]`, `["append"]`, `{}`,
	`{"op":"append"}`,
	`{"op":"replace"}`,
	`{"op":"replace","startSeq":0}`,
	`{"op":"replace","endSeq":0}`,
	`{"op":"replace","startSeq":0,"endSeq":1,"extra":2}`,
	`{"op":"replace","startSeq":0,"endSeq":1,"plugin:x":2}`,
	`{"op":"replace","startSeq":-1,"endSeq":1}`,
	`{"op":"replace","startSeq":0,"endSeq":-1}`,
	`{"op":"replace","startSeq":1.5,"endSeq":1}`,
	`{"op":"replace","startSeq":0,"endSeq":1.0}`,
	`{"op":"replace","startSeq":0,"endSeq":1e0}`,
	`{"op":"replace","startSeq":"0","endSeq":"1"}`,
	`{"op":"replace","startSeq":null,"endSeq":1}`,
	`{"op":"Replace","startSeq":0,"endSeq":1}`,
	`{"startSeq":0,"endSeq":1,"kind":"replace"}`,
	`{"op":"replace","startSeq":0,"stopSeq":1}`,
}

func TestCodeSurfaceOpInvalid(t *testing.T) {
	for _, op := range malformedOps {
		t.Run(op, func(t *testing.T) {
			e := rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeUserMessage, dataUser("u2", "x"), `,"surfaceOp":`+op)),
				sdk.CodeCorruptLog, sdk.CodeSurfaceOpInvalid, 2)
			// The detail shows the raw value (canonical form).
			doc, _ := ParseEnvelope([]byte(fmt.Sprintf(`{"seq":0,"time":0,"type":"ext/x","data":%s}`, op)), 0)
			requireDetail(t, e, string(doc.Data()))
		})
	}
	// A well-formed op with its members in another order is accepted and
	// stored canonically.
	r, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeUserMessage, dataUser("u2", "x"), `,"surfaceOp":{"endSeq":1,"startSeq":1,"op":"replace"},"sourceEventSeqs":[ 1 ]`)))
	if err != nil {
		t.Fatalf("Restore of a reordered replace op: %v", err)
	}
	if e, _ := r.Event(2); !strings.HasSuffix(string(e.Envelope()), `,"surfaceOp":{"op":"replace","startSeq":1,"endSeq":1},"sourceEventSeqs":[1]}`) {
		t.Errorf("envelope not canonical: %s", e.Envelope())
	}
	// On append the typed SurfaceOp can only break the Seq domain (step A7).
	s := baseSession(t)
	for _, op := range []*SurfaceOp{opReplace(-1, 2), opReplace(2, -1), opReplace(sdk.MaxSeq+1, 2), opReplace(2, sdk.MaxSeq+1), opReplace(-9, -9)} {
		rejectAppend(t, s, AppendInput{Type: TypeUserMessage, Data: tcRaw(dataUser("u", "x")), SurfaceOp: op, SourceEventSeqs: seqList(2)}, sdk.CodeSurfaceOpInvalid,
			fmt.Sprintf("startSeq %d", op.StartSeq), fmt.Sprintf("endSeq %d", op.EndSeq))
	}
	// A7 runs before the class rules of S2: even a log-only type gets it.
	rejectAppend(t, s, AppendInput{Type: TypeTurnStart, Data: tcRaw(`{"turn":2}`), SurfaceOp: opReplace(-1, 0)}, sdk.CodeSurfaceOpInvalid, "-1")
}

func TestCodeReplaceEndpointNotEarlier(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, replacing(evU("u", "x"), 9, 9, 8), sdk.CodeReplaceEndpointNotEarlier, "seq 9", "startSeq 9", "endSeq 9")
	rejectAppend(t, s, replacing(evU("u", "x"), 8, 10, 8), sdk.CodeReplaceEndpointNotEarlier, "seq 9", "startSeq 8", "endSeq 10")
	rejectAppend(t, s, replacing(evU("u", "x"), sdk.MaxSeq, 2, 2), sdk.CodeReplaceEndpointNotEarlier, "9007199254740991")
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeUserMessage, dataUser("u2", "x"), `,"surfaceOp":{"op":"replace","startSeq":1,"endSeq":2},"sourceEventSeqs":[1]`)),
		sdk.CodeCorruptLog, sdk.CodeReplaceEndpointNotEarlier, 2, "seq 2", "endSeq 2")
}

func TestCodeAssistantSourcesForbidden(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, withSources(evA("a", "x"), 2), sdk.CodeAssistantSourcesForbidden, "seq 9")
	rejectAppend(t, s, withSources(evA("a", "x")), sdk.CodeAssistantSourcesForbidden, "seq 9")
	// S4a precedes S4b: on restore even a malformed list is "forbidden".
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeAssistantMessage, dataAsst(1, 1, "a", ""), `,"surfaceOp":"append","sourceEventSeqs":"x"`)),
		sdk.CodeCorruptLog, sdk.CodeAssistantSourcesForbidden, 2, "seq 2")
}

func TestCodeSourcesInvalid(t *testing.T) {
	for _, c := range []struct{ raw, part string }{
		{`["x"]`, `"x"`},
		{`[0,-1]`, "[1] = -1"},
		{`[1.5]`, "1.5"},
		{`[1.0]`, "1.0"},
		{`[null]`, "null"},
		{`[[1]]`, "[0]"},
		{`"x"`, "not an array"},
		{`{}`, "not an array"},
		{`1`, "not an array"},
		{`null`, "not an array"},
	} {
		t.Run(c.raw, func(t *testing.T) {
			rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeUserMessage, dataUser("u2", "x"), `,"surfaceOp":"append","sourceEventSeqs":`+c.raw)),
				sdk.CodeCorruptLog, sdk.CodeSourcesInvalid, 2, c.part)
		})
	}
	s := baseSession(t)
	rejectAppend(t, s, withSources(evU("u", "x"), -1), sdk.CodeSourcesInvalid, "-1")
	rejectAppend(t, s, withSources(evU("u", "x"), 2, sdk.MaxSeq+1), sdk.CodeSourcesInvalid, "9007199254740992")
	// A7 precedes S4a: an out-of-domain element on an assistant message.
	rejectAppend(t, s, withSources(evA("a", "x"), -1), sdk.CodeSourcesInvalid, "-1")
}

func TestCodeSourcesEmpty(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, withSources(evU("u", "x")), sdk.CodeSourcesEmpty, "seq 9")
	rejectAppend(t, s, withSources(replacing(evU("u", "x"), 2, 2)), sdk.CodeSourcesEmpty, "seq 9")
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeUserMessage, dataUser("u2", "x"), `,"surfaceOp":"append","sourceEventSeqs":[]`)),
		sdk.CodeCorruptLog, sdk.CodeSourcesEmpty, 2, "seq 2")
	// nil means absent: accepted.
	mustAppend(t, s, AppendInput{Type: TypeUserMessage, Data: tcRaw(dataUser("u", "x")), SurfaceOp: opAppend(), SourceEventSeqs: nil})
}

func TestCodeSourcesDuplicate(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, withSources(evU("u", "x"), 2, 4, 2), sdk.CodeSourcesDuplicate, "lists 2")
	big := make([]sdk.Seq, 0, 40)
	for i := range 8 {
		big = append(big, sdk.Seq(i))
	}
	for i := range 30 {
		big = append(big, sdk.Seq(i%8))
	}
	rejectAppend(t, s, withSources(evU("u", "x"), big...), sdk.CodeSourcesDuplicate, "lists 0")
}

func TestCodeSourcesNotEarlier(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, withSources(evU("u", "x"), 2, 9), sdk.CodeSourcesNotEarlier, "element 9", "seq 9")
	rejectAppend(t, s, withSources(replacing(evU("u", "x"), 8, 8), 8, sdk.MaxSeq), sdk.CodeSourcesNotEarlier, "9007199254740991")
}

func TestCodeReplaceStartNotFound(t *testing.T) {
	s := baseSession(t)
	for _, start := range []sdk.Seq{7, 3, 0, 1} { // shadowed, log-only, boundary, header
		rejectAppend(t, s, replacing(evU("u", "x"), start, 8, start, 8), sdk.CodeReplaceStartNotFound, fmt.Sprintf("startSeq %d", start))
	}
	// A window cannot reach before its base.
	events := s.Events().Slice()
	w := NewSurface(7, nil)
	if err := w.Apply(context.Background(), events[7]); err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(context.Background(), events[8]); err != nil {
		t.Fatal(err)
	}
	if f := w.Fold(); len(f.Nodes) != 1 || f.Nodes[0] != 8 {
		t.Errorf("window nodes = %v", f.Nodes)
	}
	w2 := NewSurface(8, nil)
	if err := w2.Apply(context.Background(), events[8]); err == nil {
		t.Errorf("a window accepted a replacement reaching before it")
	} else {
		requireDetail(t, requireCode(t, err, sdk.CodeReplaceStartNotFound), "startSeq 7")
	}
}

func TestCodeReplaceEndNotFound(t *testing.T) {
	s := baseSession(t)
	for _, end := range []sdk.Seq{7, 5, 0} {
		rejectAppend(t, s, replacing(evU("u", "x"), 2, end, 2, end), sdk.CodeReplaceEndNotFound, fmt.Sprintf("endSeq %d", end))
	}
}

func TestCodeReplaceReversed(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, replacing(evU("u", "x"), 8, 2, 2, 4, 6, 8), sdk.CodeReplaceReversed, "startSeq 8 at position 3", "endSeq 2 at position 0")
	rejectAppend(t, s, replacing(evU("u", "x"), 6, 4, 4, 6), sdk.CodeReplaceReversed, "startSeq 6 at position 2", "endSeq 4 at position 1")
}

func TestCodeReplaceCoverage(t *testing.T) {
	s := baseSession(t)
	e := rejectAppend(t, s, replacing(evU("u", "x"), 2, 8, 8, 2), sdk.CodeReplaceCoverage, "missing 4, 6")
	// The rendering of docs/errors.md: <op>: <CODE>: <detail> (session "<id>", seq <n>).
	if got, want := e.Error(), `session: REPLACE_COVERAGE: `+e.Detail+` (session "s1", seq 9)`; got != want {
		t.Errorf("Error() = %s\nwant %s", got, want)
	}
	if e.Index != nil || e.Op != "session" || sdk.CodeOf(e) != sdk.CodeReplaceCoverage {
		t.Errorf("error %v has the wrong op or index", e)
	}
	rejectAppend(t, s, replacing(evU("u", "x"), 4, 4), sdk.CodeReplaceCoverage, "missing 4")
	// Citing the shadowed seq 7 (the original of node 8) does not cover node 8.
	rejectAppend(t, s, replacing(evU("u", "x"), 6, 8, 6, 7), sdk.CodeReplaceCoverage, "missing 8")
	// Extra (non-shadowed, earlier) sources are fine.
	mustAppend(t, s, replacing(evU("u", "x"), 6, 8, 0, 1, 5, 6, 7, 8))
}

func TestCodeToolResultRewriteSingle(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, replacing(evR("r6", "c1", "short"), 6, 8, 6, 8), sdk.CodeToolResultRewriteSingle, "6..8", "shadows 2")
}

func TestCodeToolResultRewriteTarget(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, replacing(evR("r6", "c1", "short"), 8, 8, 8), sdk.CodeToolResultRewriteTarget, "seq 8", "user/message")
	rejectAppend(t, s, replacing(evR("r6", "c1", "short"), 4, 4, 4), sdk.CodeToolResultRewriteTarget, "seq 4", "assistant/message")
}

func TestCodeToolResultRewriteOnlyContent(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, replacing(evR("r7", "c1", "short"), 6, 6, 6), sdk.CodeToolResultRewriteOnlyContent, "/message/id")
	rejectAppend(t, s, replacing(AppendInput{Type: TypeToolResult, Data: tcRaw(`{"turn":1,"step":2,"message":` + msgTool("r6", "c1", "short") + `}`)}, 6, 6, 6), sdk.CodeToolResultRewriteOnlyContent, "/step")
	rejectAppend(t, s, replacing(AppendInput{Type: TypeToolResult, Data: tcRaw(`{"turn":1,"step":1,"message":` + msgTool("r6", "c1", "short") + `,"meta":{}}`)}, 6, 6, 6), sdk.CodeToolResultRewriteOnlyContent, "/meta")
	rejectAppend(t, s, replacing(AppendInput{Type: TypeToolResult, Data: tcRaw(`{"turn":1,"step":1,"message":{"id":"r6","role":"tool","toolCallId":"c1","isError":false,"content":[],"source":{"kind":"tool","callId":"c1"}}}`)}, 6, 6, 6),
		sdk.CodeToolResultRewriteOnlyContent, "/message/isError")
	rejectAppend(t, s, replacing(AppendInput{Type: TypeToolResult, Data: tcRaw(`{"turn":1,"step":1,"message":{"id":"r6","role":"tool","toolCallId":"c1","content":[],"source":{"kind":"tool","callId":"c1","extra":1}}}`)}, 6, 6, 6),
		sdk.CodeToolResultRewriteOnlyContent, "/message/source")
	mustAppend(t, s, replacing(evR("r6", "c1", "short"), 6, 6, 6))
}

func TestCodeSystemNode0Protected(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s, evSys("s0", "sys"), evU("u1", "a"), evA("a2", "b"))
	rejectAppend(t, s, replacing(evU("u", "x"), 0, 1, 0, 1), sdk.CodeSystemNode0Protected, "user/message", "0..1")
	rejectAppend(t, s, replacing(evSys("s", "x"), 0, 2, 0, 1, 2), sdk.CodeSystemNode0Protected, "system/message", "0..2")
	rejectAppend(t, s, replacing(evDeveloper("d", -1, blockRemoval("read")), 0, 0, 0), sdk.CodeSystemNode0Protected, "developer/message", "0..0")
	// Not node 0: no protection.
	mustAppend(t, s, replacing(evU("u", "x"), 1, 2, 1, 2))
}

func TestCodeSessionClosed(t *testing.T) {
	s := baseSession(t)
	before := stateOf(t, s)
	ctl(s).Close()
	ctl(s).Close() // idempotent
	if !s.Closed() {
		t.Fatal("Closed() = false")
	}
	_, err := s.Append(context.Background(), evU("u", "x"))
	e := requireCode(t, err, sdk.CodeSessionClosed)
	if e.SessionID != "s1" {
		t.Errorf("SessionID = %q", e.SessionID)
	}
	_, err = s.AppendPluginRecord(context.Background(), "notes", "x", tcRaw(`{}`))
	requireCode(t, err, sdk.CodeSessionClosed)
	// A1 comes before every other rule.
	_, err = s.Append(context.Background(), AppendInput{Type: "BAD"})
	requireCode(t, err, sdk.CodeSessionClosed)
	requireUnchanged(t, before, s) // reads keep working
}

func TestCodeSessionReadOnly(t *testing.T) {
	src := baseSession(t)
	closers := InterruptedTurnClosers(src.Events().Slice())
	ro := mustRestoreEvents(t, restoreOpts(), RestoreOptions{ReadOnly: true, PendingRepair: len(closers)}, append(src.Events().Slice(), closers...))
	before := stateOf(t, ro)
	_, err := ro.Append(context.Background(), evU("u", "x"))
	requireDetail(t, requireCode(t, err, sdk.CodeSessionReadOnly), "read-only")
	_, err = ro.Append(context.Background(), AppendInput{Type: "BAD"})
	requireCode(t, err, sdk.CodeSessionReadOnly)
	if !ro.ReadOnly() || ro.PendingRepair() != len(closers) {
		t.Errorf("ReadOnly %v PendingRepair %d", ro.ReadOnly(), ro.PendingRepair())
	}
	requireUnchanged(t, before, ro)
	// A1 outranks A2.
	ctl(ro).Close()
	_, err = ro.Append(context.Background(), evU("u", "x"))
	requireCode(t, err, sdk.CodeSessionClosed)
}

func TestCodeSessionFenced(t *testing.T) {
	s := baseSession(t)
	before := stateOf(t, s)
	cause := sdk.Errorf(sdk.CodeIOError, "jsonl", "disk full")
	ctl(s).Fence(cause)
	ctl(s).Fence(errors.New("second cause"))
	if s.Fenced() != error(cause) {
		t.Errorf("Fenced() = %v, want the first cause", s.Fenced())
	}
	_, err := s.Append(context.Background(), evU("u", "x"))
	e := requireCode(t, err, sdk.CodeSessionFenced)
	if !errors.Is(err, cause) || !errors.Is(err, sdk.CodeIOError) {
		t.Errorf("SESSION_FENCED does not wrap its cause: %v", err)
	}
	if sdk.CodeOf(err) != sdk.CodeSessionFenced || e.SessionID != "s1" {
		t.Errorf("outer code %s session %q", sdk.CodeOf(err), e.SessionID)
	}
	requireUnchanged(t, before, s)
}

// TestFenceWithNilCause: Fence documents that it refuses every later append
// and that the first cause wins; a nil cause must not disable fencing for
// good (a later real cause has to fence the session).
func TestFenceWithNilCause(t *testing.T) {
	s := baseSession(t)
	ctl(s).Fence(nil)
	cause := errors.New("disk gone")
	ctl(s).Fence(cause)
	before := stateOf(t, s)
	_, err := s.Append(context.Background(), evU("u", "x"))
	if err == nil {
		t.Fatalf("Append after Fence(nil) then Fence(cause) was accepted; Fenced() = %v", s.Fenced())
	}
	requireCode(t, err, sdk.CodeSessionFenced)
	requireUnchanged(t, before, s)
}

func TestCodeInvalidSeq(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func() error
		part string
	}{
		{"NewSeq -1", func() error { _, err := sdk.NewSeq("startSeq", -1); return err }, "startSeq = -1"},
		{"NewSeq 2^53", func() error { _, err := sdk.NewSeq("endSeq", sdk.MaxSeq+1); return err }, "endSeq = 9007199254740992"},
		{"NewOffset -1", func() error { _, err := sdk.NewOffset("from", -1); return err }, "from = -1"},
		{"NewCursor -2", func() error { _, err := sdk.NewCursor("after", -2); return err }, "after = -2"},
		{"NewCursor 2^53", func() error { _, err := sdk.NewCursor("after", sdk.MaxSeq+1); return err }, "9007199254740992"},
	} {
		t.Run(c.name, func(t *testing.T) {
			requireDetail(t, requireCode(t, c.f(), sdk.CodeInvalidSeq), c.part)
		})
	}
	for _, v := range []int64{0, sdk.MaxSeq} {
		if _, err := sdk.NewSeq("x", v); err != nil {
			t.Errorf("NewSeq(%d): %v", v, err)
		}
	}
	if c, err := sdk.NewCursor("x", -1); err != nil || c != sdk.NoEvent {
		t.Errorf("NewCursor(-1) = %d, %v", c, err)
	}
	// A clock outside the Seq domain cannot stamp an event.
	s := baseSession(t)
	for _, now := range []int64{-1, sdk.MaxSeq + 1} {
		s.opts.Clock = ClockFunc(func() int64 { return now })
		rejectAppend(t, s, evU("u", "x"), sdk.CodeInvalidSeq, fmt.Sprint(now))
	}
}

func TestCodeCorruptLog(t *testing.T) {
	envs := withEnv(envLine(2, TypeStepStart, `{"turn":1,"step":1}`, ""), envLine(3, TypeTurnEnd, `{"turn":1,"reason":{}}`, "")) // index 3 is broken
	s, err := Restore(context.Background(), Options{Header: sdk.Header{ID: "sid"}}, RestoreOptions{}, envs)
	if s != nil {
		t.Errorf("a corrupt log restored")
	}
	w := requireCode(t, err, sdk.CodeCorruptLog)
	if sdk.CodeOf(err) != sdk.CodeCorruptLog || (w.Index == nil || *w.Index != 3) || (w.Seq == nil || *w.Seq != 3) || w.SessionID != "sid" || w.Op != "restore" {
		t.Errorf("CORRUPT_LOG = %+v", w)
	}
	requireDetail(t, w, "3", "PAYLOAD_INVALID")
	requireDetail(t, requireCode(t, err, sdk.CodePayloadInvalid), "kind")
	if !strings.Contains(err.Error(), "CORRUPT_LOG") || !strings.Contains(err.Error(), "PAYLOAD_INVALID") {
		t.Errorf("Error() = %s", err)
	}
	// Lineage failures of a stored log: CORRUPT_LOG, Index not applicable.
	seed, inh, _ := ForkSeed(nil, nil, tT0)
	_, err = RestoreEvents(context.Background(), restoreOpts(), RestoreOptions{}, seed) // unseeded header
	lw := requireCode(t, err, sdk.CodeCorruptLog)
	if lw.Index != nil {
		t.Errorf("lineage CORRUPT_LOG %v; want no index", lw)
	}
	requireDetail(t, requireCode(t, lw.Err, sdk.CodeSeedInvalid), "seq 0")
	_, err = RestoreEvents(context.Background(), restoreOpts(func(o *Options) { o.Header.IsSeeded, o.Header.InheritedEventCount = true, inh+3 }), RestoreOptions{}, seed)
	requireDetail(t, requireCode(t, requireCode(t, err, sdk.CodeCorruptLog).Err, sdk.CodeSeedInvalid), "3", "0")
	_, err = RestoreEvents(context.Background(), restoreOpts(func(o *Options) { o.Header.IsSeeded = true }), RestoreOptions{}, nil)
	requireCode(t, err, sdk.CodeCorruptLog)
	// Corruption is never reported as absence or an empty log.
	if errors.Is(err, sdk.CodeSessionNotFound) {
		t.Errorf("corruption reported as not found")
	}
}

func TestCodeSeedInvalid(t *testing.T) {
	envs := withEnv(envLine(2, TypeTurnEnd, `{"turn":1,"reason":{"kind":"nope"}}`, ""))
	rejectRestore(t, restoreOpts(), RestoreOptions{Source: FromSeed}, envs, sdk.CodeSeedInvalid, sdk.CodePayloadInvalid, 2, `"nope"`)
	// Lineage.
	seed, _, _ := ForkSeed(nil, nil, tT0)
	_, err := RestoreEvents(context.Background(), restoreOpts(), RestoreOptions{Source: FromSeed}, seed)
	if sdk.CodeOf(err) != sdk.CodeSeedInvalid {
		t.Errorf("lineage failure of a seed = %v", err)
	}
	// SeedWithMarker refuses an inherited marker, naming its index.
	_, err = SeedWithMarker(seed, tT0)
	e := requireCode(t, err, sdk.CodeSeedInvalid)
	if e.Index == nil || *e.Index != 0 {
		t.Errorf("error %v names the wrong index", e)
	}
}

func TestCodeFormatUnknownEventType(t *testing.T) {
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv("newer/kind", `{}`, "")), "", sdk.CodeFormatUnknownEventType, 2, `"newer/kind"`)
	e := rejectRestore(t, restoreOpts(), RestoreOptions{Source: FromSeed}, withEnv(rawEnv("lint/report", `{}`, "")), "", sdk.CodeFormatUnknownEventType, 2, `"lint/report"`)
	if e.Seq == nil || *e.Seq != 2 {
		t.Errorf("error %v names the wrong seq", e)
	}
	// Declared by a loaded plugin: known.
	if _, err := Restore(context.Background(), restoreOpts(func(o *Options) { o.PluginTypes = map[string]bool{"lint/report": false} }), RestoreOptions{}, withEnv(rawEnv("lint/report", `{}`, ""))); err != nil {
		t.Errorf("Restore with the plugin loaded: %v", err)
	}
}

func TestCodeInvalidBoundary(t *testing.T) {
	s := baseSession(t)
	b := sdk.Seq(9)
	_, _, err := ForkSeed(s.Events().Slice(), &b, tT0)
	requireDetail(t, requireCode(t, err, sdk.CodeInvalidBoundary), "boundary 9", "(8)")
}

func TestCodeProjectionRequired(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, evRaw("projection:lens/hide", `{"targets":[2]}`), sdk.CodeProjectionRequired, `"projection:lens/hide"`, `"lens"`)
	// Checked before ignorable (there is no definition to say anything).
	rejectAppend(t, s, AppendInput{Type: "projection:lens/hide", Data: tcRaw(`{"targets":[2]}`), Ignorable: true}, sdk.CodeProjectionRequired)
	// Restore refuses it unwrapped, even when marked ignorable.
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv("projection:lens/hide", `{"targets":[1]}`, "")), "", sdk.CodeProjectionRequired, 2, `"lens"`)
}

func TestCodeProjectionInvalid(t *testing.T) {
	defs := ProjectionMap{redactType: &fakeProjection{id: "r", project: redactTo(nil)}}
	s := baseSession(t, func(o *Options) { o.Projections = defs })
	rejectAppend(t, s, projectionEvent(redactType, `[7]`, "x"), sdk.CodeProjectionInvalid, "target 7")
	rejectAppend(t, s, projectionEvent(redactType, `[3]`, "x"), sdk.CodeProjectionInvalid, "target 3")
	rejectAppend(t, s, projectionEvent(redactType, `[2,7]`, "x"), sdk.CodeProjectionInvalid, "target 7")
	// Targets are a payload rule first (docs/plugins.md).
	rejectAppend(t, s, projectionEvent(redactType, `[]`, "x"), sdk.CodePayloadInvalid, "targets")
	rejectAppend(t, s, projectionEvent(redactType, `[2,2]`, "x"), sdk.CodePayloadInvalid, "2")
	rejectAppend(t, s, projectionEvent(redactType, `[9]`, "x"), sdk.CodePayloadInvalid, "9")
	rejectAppend(t, s, evRaw(redactType, `{"text":"x"}`), sdk.CodePayloadInvalid, "targets")
	mustAppend(t, s, projectionEvent(redactType, `[2,6,8]`, "x"))
	requireGenerations(t, s, 1, 2)
	requireReplayEqual(t, s, func(o *Options) { o.Projections = defs })
}

func TestCodeProjectionFailed(t *testing.T) {
	boom := errors.New("rpc timeout")
	defs := ProjectionMap{redactType: &fakeProjection{id: "r", project: func(ProjectInput) ([]ProjectTarget, error) { return nil, boom }}}
	s := baseSession(t, func(o *Options) { o.Projections = defs })
	e := rejectAppend(t, s, projectionEvent(redactType, `[2]`, "x"), sdk.CodeProjectionFailed, redactType)
	if !errors.Is(e, boom) {
		t.Errorf("PROJECTION_FAILED does not wrap the cause")
	}
	// Restore calls the definition again: a failing definition fails the
	// restore, and the cause stays visible through the restore wrapper.
	ok := &fakeProjection{id: "r", project: redactTo(nil)}
	good := baseSession(t, func(o *Options) { o.Projections = ProjectionMap{redactType: ok} })
	mustAppend(t, good, projectionEvent(redactType, `[2]`, "x"))
	_, err := Restore(context.Background(), restoreOpts(func(o *Options) { o.Projections = defs }), RestoreOptions{}, envelopesOf(good))
	if !errors.Is(err, sdk.CodeProjectionFailed) || !errors.Is(err, boom) {
		t.Errorf("Restore with a failing definition = %v", err)
	}
	if w := findCode(err, sdk.CodeProjectionFailed); w == nil || !strings.Contains(err.Error(), redactType) {
		t.Errorf("restore error does not name the projection type: %v", err)
	}
}

func TestCodeProjectionRemoved(t *testing.T) {
	def := &fakeProjection{id: "r", project: redactTo(nil)}
	defs := ProjectionMap{redactType: def}
	s := baseSession(t, func(o *Options) { o.Projections = defs })
	mustAppend(t, s, projectionEvent(redactType, `[2]`, "x"))
	before := stateOf(t, s)
	delete(defs, redactType)
	_, err := s.Messages()
	requireDetail(t, requireCode(t, err, sdk.CodeProjectionRemoved), redactType)
	_, err = s.Surface()
	requireCode(t, err, sdk.CodeProjectionRemoved)
	_, err = s.Append(context.Background(), evU("u", "x"))
	requireCode(t, err, sdk.CodeProjectionRemoved)
	requireSnapshotsIntact(t, before)
	defs[redactType] = def
	requireUnchanged(t, before, s)
}

// TestAppendBackpressureCancelled checks step A4: a context that ends while
// storage is behind fails the append with ctx.Err() and commits nothing.
func TestAppendBackpressureCancelled(t *testing.T) {
	var block bool
	s := baseSession(t, func(o *Options) {
		o.Backpressure = func(ctx context.Context) error {
			if !block {
				return nil
			}
			<-ctx.Done()
			return ctx.Err()
		}
	})
	block = true
	before := stateOf(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := s.Append(ctx, evU("u", "x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Append = %v, want the context's error", err)
	}
	requireUnchanged(t, before, s)
}

type rejectAll struct{ err error }

func (r rejectAll) CheckAppend(EventList, Event) error { return r.err }

// TestAppendRelationalRejection checks step A11: a host validator's error is
// returned and nothing is committed.
func TestAppendRelationalRejection(t *testing.T) {
	v := &rejectAll{}
	s := baseSession(t, func(o *Options) { o.Relational = []Relational{v} })
	v.err = sdk.Errorf(sdk.CodeCompactionInvariant, "compaction", "summary overlaps seq 4")
	rejectAppend(t, s, evU("u", "x"), sdk.CodeCompactionInvariant, "seq 4")
}

// ---- hostile inputs ----

// TestBadInputHugeData: 100 MiB of data fails fast at J1, allocating nothing
// on the scale of the input.
func TestBadInputHugeData(t *testing.T) {
	data := bytes.Repeat([]byte{'a'}, 100<<20)
	data[0], data[len(data)-1] = '"', '"'
	s := baseSession(t)
	before := stateOf(t, s)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	_, err := s.Append(context.Background(), AppendInput{Type: "ext/blob", Data: data, Ignorable: true})
	elapsed := time.Since(start)
	runtime.ReadMemStats(&m1)
	requireDetail(t, requireCode(t, err, sdk.CodeEventTooLarge), "104857600", "33554432")
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 1<<20 {
		t.Errorf("rejecting 100 MiB allocated %d bytes", alloc)
	}
	if elapsed > 2*time.Second {
		t.Errorf("rejecting 100 MiB took %v", elapsed)
	}
	requireUnchanged(t, before, s)
	// The same for a typed user message and for a stored line.
	rejectAppend(t, s, AppendInput{Type: TypeUserMessage, Data: data, SurfaceOp: opAppend()}, sdk.CodeEventTooLarge, "104857600")
	runtime.ReadMemStats(&m0)
	_, err = Restore(context.Background(), restoreOpts(), RestoreOptions{}, [][]byte{data})
	runtime.ReadMemStats(&m1)
	requireCode(t, err, sdk.CodeEventTooLarge)
	requireCode(t, err, sdk.CodeCorruptLog)
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing a 100 MiB stored line allocated %d bytes", alloc)
	}
}

func TestBadInputDeepNesting(t *testing.T) {
	s := baseSession(t)
	for _, data := range []string{
		strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000),
		strings.Repeat(`{"a":`, 10_000) + "0" + strings.Repeat("}", 10_000),
		strings.Repeat(`[{"a":`, 5_000) + "0" + strings.Repeat("}]", 5_000),
		strings.Repeat("[", 10_000),
	} {
		rejectAppend(t, s, blobIn(data), sdk.CodeJSONTooDeep)
		rejectAppend(t, s, AppendInput{Type: TypeUserMessage, Data: tcRaw(`{"id":"u","role":"user","content":[{"type":"plugin:x","v":` + data + `}],"source":{"kind":"k"}}`), SurfaceOp: opAppend()}, sdk.CodeJSONTooDeep)
		rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv("ext/blob", data, `,"ignorable":true`)), sdk.CodeCorruptLog, sdk.CodeJSONTooDeep, 2)
	}
}

func TestBadInputLoneSurrogatesAndInvalidUTF8(t *testing.T) {
	s := baseSession(t)
	for _, text := range []string{`\ud800`, `\udfff`, `a\ud800b`, `\ud800\ud800`, `\udc00\ud800`} {
		data := `{"id":"u","role":"user","content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"k"}}`
		rejectAppend(t, s, AppendInput{Type: TypeUserMessage, Data: tcRaw(data), SurfaceOp: opAppend()}, sdk.CodeJSONInvalidUTF8, "offset")
	}
	for _, b := range []string{"\xff", "\xc3", "\xe0\x80\x80", "\xf4\x90\x80\x80", "\xed\xbf\xbf"} {
		data := `{"id":"u","role":"user","content":[{"type":"text","text":"` + b + `"}],"source":{"kind":"k"}}`
		rejectAppend(t, s, AppendInput{Type: TypeUserMessage, Data: tcRaw(data), SurfaceOp: opAppend()}, sdk.CodeJSONInvalidUTF8, "offset")
		rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeUserMessage, data, `,"surfaceOp":"append"`)), sdk.CodeCorruptLog, sdk.CodeJSONInvalidUTF8, 2)
	}
	// In the type member of a stored envelope too.
	rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv([]byte("{\"seq\":2,\"time\":0,\"type\":\"a/\xff\",\"data\":{}}")), sdk.CodeCorruptLog, sdk.CodeJSONInvalidUTF8, 2)
}

func TestBadInputDuplicateKeys(t *testing.T) {
	s := baseSession(t)
	rejectAppend(t, s, AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"id":"u","id":"v","role":"user","content":[],"source":{"kind":"k"}}`)}, sdk.CodeJSONDuplicateKey, `"id"`)
	rejectAppend(t, s, AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(), Data: tcRaw(`{"id":"u","role":"user","content":[],"source":{"kind":"k","k\u0069nd":"j"}}`)}, sdk.CodeJSONDuplicateKey, `"kind"`, "/source")
	for _, dup := range []string{`"type":"ext/blob"`, `"data":{}`, `"ignorable":true`} {
		line := fmt.Sprintf(`{"seq":2,"time":0,"type":"ext/blob","data":{},"ignorable":true,%s}`, dup)
		rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv([]byte(line)), sdk.CodeCorruptLog, sdk.CodeJSONDuplicateKey, 2)
	}
}

// TestBadInputForgedSeqs: stored lines whose seq is forged, negative or not
// an integer are refused with the rule that names them.
func TestBadInputForgedSeqs(t *testing.T) {
	line := func(seq string) []byte {
		return []byte(`{"seq":` + seq + `,"time":0,"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}`)
	}
	for _, c := range []struct {
		seq  string
		code sdk.Code
	}{
		{"3", sdk.CodeSeqNotContiguous},
		{"1", sdk.CodeSeqNotContiguous},
		{"9007199254740991", sdk.CodeSeqNotContiguous},
		{"-1", sdk.CodeEnvelopeInvalid},
		{"-2", sdk.CodeEnvelopeInvalid},
		{"2.5", sdk.CodeEnvelopeInvalid},
		{"2e0", sdk.CodeEnvelopeInvalid},
		{`"2"`, sdk.CodeEnvelopeInvalid},
		{"-0", sdk.CodeJSONNegativeZero},
		{"9007199254740992", sdk.CodeJSONUnsafeInteger},
		{"99999999999999999999", sdk.CodeJSONUnsafeInteger},
		{"1e400", sdk.CodeJSONNumberNotFinite},
	} {
		t.Run(c.seq, func(t *testing.T) {
			rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(line(c.seq)), sdk.CodeCorruptLog, c.code, 2)
		})
	}
	// Events handed over as Event values are re-checked too: a log of another
	// session's events in the wrong order is refused.
	s := baseSession(t)
	ev := s.Events().Slice()
	ev[2], ev[3] = ev[3], ev[2]
	_, err := RestoreEvents(context.Background(), restoreOpts(), RestoreOptions{}, ev)
	requireCode(t, err, sdk.CodeSeqNotContiguous)
}

// TestBadInputCrossingAndReversedSpans: replace spans that cross an earlier
// replacement, or run backwards in surface order, are refused.
func TestBadInputCrossingAndReversedSpans(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	for i := range 6 {
		mustAppend(t, s, evU(fmt.Sprintf("u%d", i), "x"))
	}
	mustAppend(t, s, replacing(evU("c6", "c"), 1, 3, 1, 2, 3)) // [0 6 4 5]
	// Spans crossing the replaced one: an endpoint inside it is gone.
	rejectAppend(t, s, replacing(evU("x", "x"), 2, 4, 2, 4, 6), sdk.CodeReplaceStartNotFound, "startSeq 2")
	rejectAppend(t, s, replacing(evU("x", "x"), 0, 3, 0, 3, 6), sdk.CodeReplaceEndNotFound, "endSeq 3")
	rejectAppend(t, s, replacing(evU("x", "x"), 3, 1, 1, 3), sdk.CodeReplaceStartNotFound, "startSeq 3")
	// Reversed in surface order (numerically and not).
	rejectAppend(t, s, replacing(evU("x", "x"), 5, 0, 0, 4, 5, 6), sdk.CodeReplaceReversed, "startSeq 5 at position 3", "endSeq 0 at position 0")
	rejectAppend(t, s, replacing(evU("x", "x"), 4, 6, 4, 6), sdk.CodeReplaceReversed, "startSeq 4 at position 2", "endSeq 6 at position 1")
	// A span covering the replacement itself is fine.
	mustAppend(t, s, replacing(evU("c7", "c"), 0, 4, 0, 6, 4))
	requireNodes(t, s, 7, 5)
	// Stored logs with the same defects are corrupt.
	bad := append(envelopesOf(s)[:7], envLine(7, TypeUserMessage, dataUser("x", "x"), `,"surfaceOp":{"op":"replace","startSeq":4,"endSeq":6},"sourceEventSeqs":[4,6]`))
	rejectRestore(t, restoreOpts(), RestoreOptions{}, bad, sdk.CodeCorruptLog, sdk.CodeReplaceReversed, 7)
	requireReplayEqual(t, s)
}

// TestBadInputMalformedSurfaceOps runs every malformed surfaceOp shape
// through each class: class S refuses it as SURFACE_OP_INVALID, classes B
// and L as SURFACE_OP_NOT_ALLOWED, class U retains it.
func TestBadInputMalformedSurfaceOps(t *testing.T) {
	for _, op := range malformedOps {
		rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeToolResult, dataResult("r", "c", "x"), `,"surfaceOp":`+op)), sdk.CodeCorruptLog, sdk.CodeSurfaceOpInvalid, 2)
		rejectRestore(t, restoreOpts(), RestoreOptions{}, withEnv(rawEnv(TypeStepStart, `{"turn":1,"step":1}`, `,"surfaceOp":`+op)), sdk.CodeCorruptLog, sdk.CodeSurfaceOpNotAllowed, 2)
		s, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, withEnv(rawEnv("ext/blob", `{}`, `,"surfaceOp":`+op+`,"ignorable":true`)))
		if err != nil {
			t.Errorf("class U with surfaceOp %s: %v", op, err)
			continue
		}
		requireNodes(t, s, 1)
	}
}

// TestBadInputNeverPanics feeds junk to every entry point; each must return
// an error (or accept), never panic, and a rejection changes nothing.
func TestBadInputNeverPanics(t *testing.T) {
	junk := []string{
		``, ` `, `{`, `}`, `[`, `]`, `"`, `\`, `nul`, `null`, `0`, `-`, `-0`, `1e`, `1e+`, `.5`, `0x10`,
		`{"":}`, `{,}`, `[,]`, `{"a" 1}`, `"\u"`, `"\uD800\u"`, "\x00", "\"\x00\"", "\xef\xbb\xbf{}",
		`{"turn":1}`, `{"turn":null}`, `{"id":1,"role":1,"content":1,"source":1}`, `[]`, `{}`, `""`, `true`,
		`{"message":{"content":[{"type":null}]}}`, `{"message":[]}`, `{"header":{"config":{}},"reason":1}`,
		`{"targets":[0,0]}`, `{"targets":"x"}`, `{"todos":[{}]}`, `{"turn":1,"reason":{"kind":"aborted","cause":[]}}`,
		strings.Repeat(`{"a":[`, 300) + strings.Repeat(`]}`, 300),
	}
	types := []string{TypeTurnStart, TypeTurnEnd, TypeStepStart, TypeSystemMessage, TypeDeveloperMessage, TypeUserMessage,
		TypeAssistantMessage, TypeAssistantAttempt, TypeToolCall, TypeToolResult, TypeTodoWrite, TypeRequestHeader,
		TypeRequestContext, TypeCompactionStart, TypeCompactionSummary, TypeCompactionEnd, TypeCompactionPrune,
		redactType, "plugin:x/y", "ext/blob"}
	defs := ProjectionMap{redactType: &fakeProjection{id: "r", project: redactTo(nil)}}
	s := baseSession(t, func(o *Options) { o.Projections = defs })
	ops := []*SurfaceOp{nil, opAppend(), opReplace(8, 8), opReplace(2, 6), opReplace(-1, 3)}
	for _, typ := range types {
		for _, d := range junk {
			for i, op := range ops {
				in := AppendInput{Type: typ, Data: tcRaw(d), SurfaceOp: op, Ignorable: i%2 == 1}
				if i == 2 {
					in.SourceEventSeqs = seqList(8)
				}
				noPanic(t, fmt.Sprintf("Append(%s, %q)", typ, d), func() {
					before := stateOf(t, s)
					if _, err := s.Append(context.Background(), in); err != nil {
						if sdk.CodeOf(err) == "" {
							t.Errorf("Append(%s, %q) error without a code: %v", typ, d, err)
						}
						requireUnchanged(t, before, s)
					}
				})
			}
			noPanic(t, fmt.Sprintf("Restore(%s, %q)", typ, d), func() {
				line := []byte(fmt.Sprintf(`{"seq":2,"time":0,"type":%s,"data":%s}`, tcQuote(typ), d))
				_, err := Restore(context.Background(), restoreOpts(func(o *Options) { o.Projections = defs }), RestoreOptions{}, withEnv(line))
				if err != nil && sdk.CodeOf(err) == "" {
					t.Errorf("Restore error without a code: %v", err)
				}
			})
		}
	}
	for _, line := range junk {
		noPanic(t, "ParseEnvelope", func() { _, _ = ParseEnvelope([]byte(line), 0) })
		noPanic(t, "Restore", func() {
			if _, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, [][]byte{[]byte(line)}); err == nil {
				t.Errorf("Restore accepted %q", line)
			}
		})
	}
	// Detached functions and reads over odd inputs.
	s = baseSession(t)
	noPanic(t, "OpenTurnClosers", func() { _ = OpenTurnClosers(nil, "weird") })
	noPanic(t, "Fold(nil)", func() { _, _ = Fold(context.Background(), nil, nil) })
	noPanic(t, "MessageOf(non-surface)", func() {
		if _, ok := MessageOf(s.Events().At(0), nil); ok {
			t.Errorf("turn/start yields a message")
		}
	})
	noPanic(t, "Event(-1)", func() {
		if _, ok := s.Event(-1); ok {
			t.Errorf("Event(-1) exists")
		}
	})
	noPanic(t, "Events().Range", func() {
		if r := s.Events().Range(5, 2); r.Len() != 0 {
			t.Errorf("reversed Range has %d events", r.Len())
		}
		if r := s.Events().Range(7, 100); r.Len() != 2 || r.At(0).Seq() != 7 {
			t.Errorf("clamped Range = %d events", r.Len())
		}
	})
}

// TestAppendRuleOrder: with several rules broken at once, Append reports the
// first in the order of the append checks (A1–A12), then of the surface
// steps (S1–S7h); docs/format.md.
func TestAppendRuleOrder(t *testing.T) {
	s := baseSession(t)
	badJSON := tcRaw(`{"a":-0}`)
	for _, c := range []struct {
		name string
		in   AppendInput
		code sdk.Code
	}{
		{"A5 type before A6 JSON", AppendInput{Type: "Bad", Data: badJSON}, sdk.CodeEventTypeInvalid},
		{"A5 reserved before A6 JSON", AppendInput{Type: TypeSessionEndSeed, Data: badJSON}, sdk.CodeEventTypeReserved},
		{"A5 ignorable before A6 JSON", AppendInput{Type: TypeTurnStart, Data: badJSON, Ignorable: true}, sdk.CodeIgnorableNotAllowed},
		{"A6 JSON before A7 domain", AppendInput{Type: TypeUserMessage, Data: badJSON, SurfaceOp: opReplace(-1, 0), SourceEventSeqs: seqList(-1)}, sdk.CodeJSONNegativeZero},
		{"A7 op before A7 sources", AppendInput{Type: TypeUserMessage, Data: tcRaw(dataUser("u", "x")), SurfaceOp: opReplace(-1, 0), SourceEventSeqs: seqList(-1)}, sdk.CodeSurfaceOpInvalid},
		{"A7 domain before A9 payload", AppendInput{Type: TypeUserMessage, Data: tcRaw(`{}`), SurfaceOp: opAppend(), SourceEventSeqs: seqList(-1)}, sdk.CodeSourcesInvalid},
		{"A9 payload before S2d marker", AppendInput{Type: TypeUserMessage, Data: tcRaw(`{}`)}, sdk.CodePayloadInvalid},
		{"A9 payload before S2b", AppendInput{Type: TypeTurnStart, Data: tcRaw(`{}`), SurfaceOp: opAppend()}, sdk.CodePayloadInvalid},
		{"S2b op before S2c sources", AppendInput{Type: TypeStepEnd, Data: tcRaw(`{"turn":1,"step":1}`), SurfaceOp: opAppend(), SourceEventSeqs: seqList()}, sdk.CodeSurfaceOpNotAllowed},
		{"S2d marker before S4 sources", AppendInput{Type: TypeUserMessage, Data: tcRaw(dataUser("u", "x")), SourceEventSeqs: seqList()}, sdk.CodeSurfaceMarkerRequired},
		{"S3 before S4", replacing(evU("u", "x"), 9, 9, 1, 1), sdk.CodeReplaceEndpointNotEarlier},
		{"S4a before S4c", withSources(evA("a", "x")), sdk.CodeAssistantSourcesForbidden},
		{"S4c before S7", withSources(replacing(evU("u", "x"), 7, 7)), sdk.CodeSourcesEmpty},
		{"S4d before S4e", withSources(evU("u", "x"), 20, 20), sdk.CodeSourcesDuplicate},
		{"S4e before S7a", replacing(evU("u", "x"), 7, 7, 7, 9), sdk.CodeSourcesNotEarlier},
		{"S5 before S7", replacing(evDeveloper("d", 3, blockAddition("search")), 7, 7, 7), sdk.CodeDeveloperHeaderSeqInvalid},
		{"S7a before S7b", replacing(evU("u", "x"), 7, 5, 7, 5), sdk.CodeReplaceStartNotFound},
		{"S7b before S7c", replacing(evU("u", "x"), 8, 5, 8, 5), sdk.CodeReplaceEndNotFound},
		{"S7c before S7d", replacing(evU("u", "x"), 8, 2), sdk.CodeReplaceReversed},
		{"S7d before S7e", replacing(evR("r", "c1", "x"), 4, 6), sdk.CodeReplaceCoverage},
		{"S7e before S7f", replacing(evR("r", "c1", "x"), 2, 4, 2, 4), sdk.CodeToolResultRewriteSingle},
		{"S7f before S7g", replacing(evR("r", "c1", "x"), 2, 2, 2), sdk.CodeToolResultRewriteTarget},
	} {
		t.Run(c.name, func(t *testing.T) {
			rejectAppend(t, s, c.in, c.code)
		})
	}
	// A4 (back-pressure) comes before every content rule.
	block := false
	bp := baseSession(t, func(o *Options) {
		o.Backpressure = func(ctx context.Context) error {
			if block {
				return context.Canceled
			}
			return nil
		}
	})
	block = true
	before := stateOf(t, bp)
	if _, err := bp.Append(context.Background(), AppendInput{Type: "Bad"}); !errors.Is(err, context.Canceled) {
		t.Errorf("A4 after A5: %v", err)
	}
	requireUnchanged(t, before, bp)
	// A1 before A3.
	ctl(bp).Fence(errors.New("x"))
	ctl(bp).Close()
	_, err := bp.Append(context.Background(), evU("u", "x"))
	requireCode(t, err, sdk.CodeSessionClosed)
}

// TestRestoreRuleOrder: the restore pipeline of docs/format.md — envelope and
// lossless JSON, S1, class rules, event-local rules, then S2–S7.
func TestRestoreRuleOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		line []byte
		code sdk.Code
	}{
		{"S1 before class", envLine(5, "newer/kind", `{}`, ""), sdk.CodeSeqNotContiguous},
		{"S1 before payload", envLine(3, TypeTurnEnd, `{}`, ""), sdk.CodeSeqNotContiguous},
		{"class before payload", rawEnv(TypeTurnEnd, `{}`, `,"ignorable":true`), sdk.CodeIgnorableNotAllowed},
		{"type grammar before payload", rawEnv("Turn/end", `{}`, ""), sdk.CodeEventTypeInvalid},
		{"payload before S2b", rawEnv(TypeTurnEnd, `{}`, `,"surfaceOp":"append"`), sdk.CodePayloadInvalid},
		{"payload before S2d", rawEnv(TypeUserMessage, `{}`, ""), sdk.CodePayloadInvalid},
		{"S2e before S4", rawEnv(TypeUserMessage, dataUser("u", "x"), `,"surfaceOp":"x","sourceEventSeqs":"x"`), sdk.CodeSurfaceOpInvalid},
		{"S4b before S7", rawEnv(TypeUserMessage, dataUser("u", "x"), `,"surfaceOp":{"op":"replace","startSeq":0,"endSeq":0},"sourceEventSeqs":["x"]`), sdk.CodeSourcesInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, withEnv(c.line))
			if findCode(err, c.code) == nil {
				t.Errorf("Restore = %v, want %s", err, c.code)
			}
		})
	}
	// The format refusal is not wrapped, and S1 still comes first.
	_, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, withEnv(rawEnv("newer/kind", `{}`, "")))
	if sdk.CodeOf(err) != sdk.CodeFormatUnknownEventType {
		t.Errorf("unknown type refusal = %v", err)
	}
}

// TestEventSizeBoundaries: J1 admits exactly 2 × MaxEventBytes of raw input
// and J10 exactly MaxEventBytes of canonical envelope.
func TestEventSizeBoundaries(t *testing.T) {
	s := baseSession(t, func(o *Options) { o.MaxEventBytes = sdk.MinMaxEventBytes })
	// J1: 2048 raw bytes (mostly whitespace) pass, 2049 fail.
	rejectAppend(t, s, blobIn(`[1]`+strings.Repeat(" ", 2046)), sdk.CodeEventTooLarge, "2049")
	overhead := len(fmt.Sprintf(`{"seq":9,"time":%d,"type":"ext/blob","data":"","ignorable":true}`, tT0))
	// J10: one byte over, then exactly at the cap.
	rejectAppend(t, s, blobIn(`"`+strings.Repeat("x", 1024-overhead+1)+`"`), sdk.CodeEventTooLarge, "1025")
	e := mustAppend(t, s, blobIn(`"`+strings.Repeat("x", 1024-overhead)+`"`))
	if e.EnvelopeLen() != 1024 {
		t.Errorf("envelope at the cap is %d bytes", e.EnvelopeLen())
	}
	mustAppend(t, s, blobIn(`[1]`+strings.Repeat(" ", 2045)))
	// Restore admits what append wrote.
	if _, err := Restore(context.Background(), restoreOpts(func(o *Options) { o.MaxEventBytes = sdk.MinMaxEventBytes }), RestoreOptions{}, envelopesOf(s)); err != nil {
		t.Errorf("Restore of a log with an event at the cap: %v", err)
	}
}
