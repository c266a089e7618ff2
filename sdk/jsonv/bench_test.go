package jsonv

import (
	"encoding/json"
	"testing"
)

// messageJSON is a realistic assistant message of about 1 KiB: prose, a tool
// call whose arguments are a JSON-encoded string carrying Go code (so it is
// full of escapes), and usage counters.
const messageJSON = `{"role":"assistant","id":"msg_01J8ZK4N6Q2W3E5R7T9Y","model":"deepseek-chat","content":[` +
	`{"type":"text","text":"The loop reads one byte past the end of the slice when the input ends inside a quoted string. ` +
	`I'll tighten the bound and add a test for an unterminated string — here is the edit:"},` +
	`{"type":"tool_call","id":"call_7f3a9c2e","name":"edit_file","arguments":"{\"path\":\"internal/scan/scan.go\",` +
	`\"old\":\"for i := 0; i <= len(s); i++ {\\n\\tif s[i] == '\\\"' {\\n\\t\\treturn i\\n\\t}\\n}\",` +
	`\"new\":\"for i := 0; i < len(s); i++ {\\n\\tif s[i] == '\\\"' {\\n\\t\\treturn i\\n\\t}\\n}\\nreturn -1\",` +
	`\"note\":\"bound is len(s)\\u2014see #412\"}"}],` +
	`"stop_reason":"tool_use","usage":{"input_tokens":18234,"output_tokens":412,"cache_read_input_tokens":16384,` +
	`"cache_creation_input_tokens":0,"reasoning_tokens":96},"latency_ms":1873.5,"created_at":1717171717123,` +
	`"metadata":{"turn":7,"retry":false,"temperature":0.2,"tags":["edit","go","bugfix"],"trace":null}}`

func benchInput(b *testing.B) []byte {
	src := []byte(messageJSON)
	if !json.Valid(src) {
		b.Fatal("benchmark input is not JSON")
	}
	return src
}

func TestBenchInputShape(t *testing.T) {
	if n := len(messageJSON); n < 900 || n > 1200 {
		t.Errorf("messageJSON is %d bytes, want about 1 KiB", n)
	}
	root := mustParse(t, messageJSON).Root()
	args, _ := root.Get("content").Index(1).Get("arguments").Str()
	var v map[string]string
	if err := json.Unmarshal([]byte(args), &v); err != nil || v["path"] != "internal/scan/scan.go" {
		t.Errorf("arguments do not decode: %v", err)
	}
}

func BenchmarkParse1KiB(b *testing.B) {
	src := benchInput(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendParse1KiB(b *testing.B) {
	src := benchInput(b)
	buf := make([]byte, 0, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := AppendParse(buf, src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONValid1KiB(b *testing.B) {
	src := benchInput(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(src) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkGet(b *testing.B) {
	root, err := Parse(benchInput(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := root.Root()
	b.ReportAllocs()
	for b.Loop() {
		if !r.Get("content").Index(1).Get("name").StrEqual("edit_file") {
			b.Fatal("lookup failed")
		}
	}
}

func BenchmarkReparse1KiB(b *testing.B) {
	src := benchInput(b)
	buf := make([]byte, 0, len(src))
	var r Reparser
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := r.AppendParse(buf, src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
