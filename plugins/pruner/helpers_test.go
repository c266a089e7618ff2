package pruner

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// text is a canonical text block.
func text(s string) string {
	return `{"type":"text","text":` + string(jsonv.AppendString(nil, s)) + `}`
}

// image is a canonical image block.
const image = `{"type":"image","mediaType":"image/png","data":"iVBORw0KGgo="}`

// pluginBlock is a canonical plugin block.
const pluginBlock = `{"type":"plugin:acme/chart","spec":{"bars":[1,2,3]}}`

// content joins blocks into a content array.
func content(blocks ...string) string { return "[" + strings.Join(blocks, ",") + "]" }

// message is a derived tool/result message with the given blocks.
func message(blocks ...string) []byte {
	return []byte(`{"id":"m1","role":"tool","content":` + content(blocks...) +
		`,"source":{"kind":"tool","callId":"c1"},"toolCallId":"c1"}`)
}

// withContent returns msg with its content replaced, as the host's rewrite
// does.
func withContent(t testing.TB, msg, c []byte) []byte {
	t.Helper()
	doc, err := jsonv.Parse(msg, jsonv.Options{})
	if err != nil {
		t.Fatalf("parsing %s: %v", msg, err)
	}
	var out []byte
	out = append(out, '{')
	first := true
	for name, v := range doc.Root().Members() {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = name.AppendRaw(out)
		out = append(out, ':')
		if name.StrEqual("content") {
			out = append(out, c...)
		} else {
			out = v.AppendRaw(out)
		}
	}
	return append(out, '}')
}

// textChars returns the code points of the text blocks of a content array,
// and the canonical encodings of its other blocks in order.
func textChars(t testing.TB, c []byte) (chars int64, texts []string, others []string) {
	t.Helper()
	doc, err := jsonv.Parse(c, jsonv.Options{})
	if err != nil {
		t.Fatalf("content %s is not JSON: %v", c, err)
	}
	if string(doc.Root().Bytes()) != string(c) {
		t.Fatalf("content is not canonical JSON:\n got %s\nwant %s", c, doc.Root().Bytes())
	}
	for _, b := range doc.Root().Elements() {
		if b.Get("type").StrEqual("text") {
			s, _ := b.Get("text").Str()
			chars += int64(utf8.RuneCountInString(s))
			texts = append(texts, s)
			continue
		}
		others = append(others, string(b.Bytes()))
	}
	return chars, texts, others
}

// budget is a shorthand for a PruneBudget.
func budget(threshold, head, tail int64) sdk.PruneBudget {
	return sdk.PruneBudget{ThresholdChars: threshold, HeadChars: head, TailChars: tail}
}

// requireCode fails t unless err is an *sdk.Error with code whose message
// contains every value in want.
func requireCode(t testing.TB, err error, code sdk.Code, want ...string) *sdk.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	e, ok := err.(*sdk.Error)
	if !ok || e.Code != code {
		t.Fatalf("error %v (%T); want code %s", err, err, code)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
	return e
}
