package appendinput_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/appendinput"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Parse keeps data's bytes as written and reads every optional member.
func TestParseKeepsDataAndReadsTheMembers(t *testing.T) {
	in, err := appendinput.Parse([]byte(`{"data": {"n":1.0e0,"b":1,"a":2}, "type":"app/x","ignorable":true,"surfaceOp":{"op":"replace","startSeq":1,"endSeq":3},"sourceEventSeqs":[2,3]}`))
	if err != nil {
		t.Fatal(err)
	}
	if in.Type != "app/x" || string(in.Data) != `{"n":1.0e0,"b":1,"a":2}` || !in.Ignorable {
		t.Fatalf("parsed %+v (data %s)", in, in.Data)
	}
	if in.SurfaceOp == nil || *in.SurfaceOp != (session.SurfaceOp{Replace: true, StartSeq: 1, EndSeq: 3}) {
		t.Errorf("surfaceOp %+v", in.SurfaceOp)
	}
	if len(in.SourceEventSeqs) != 2 || in.SourceEventSeqs[0] != 2 || in.SourceEventSeqs[1] != 3 {
		t.Errorf("sources %v", in.SourceEventSeqs)
	}
	in, err = appendinput.Parse([]byte(`{"type":"user/message","data":null,"surfaceOp":"append","sourceEventSeqs":[]}`))
	if err != nil || in.SurfaceOp == nil || in.SurfaceOp.Replace || in.SourceEventSeqs == nil || len(in.SourceEventSeqs) != 0 {
		t.Fatalf("append op, empty sources: %+v %v", in, err)
	}
}

// Each rule a line breaks has its code, naming what was found.
func TestParseRefusals(t *testing.T) {
	cases := []struct {
		name, line string
		code       sdk.Code
		says       string
	}{
		{"not JSON", `{"type":`, sdk.CodeJSONSyntax, ""},
		{"not an object", `["type"]`, sdk.CodeJSONSyntax, "JSON object"},
		{"type not a string", `{"type":1,"data":1}`, sdk.CodeEnvelopeInvalid, "got 1"},
		{"missing type", `{"data":1}`, sdk.CodeEnvelopeInvalid, "missing member type"},
		{"missing data", `{"type":"a/b"}`, sdk.CodeEnvelopeInvalid, "missing member data"},
		{"unknown member", `{"type":"a/b","data":1,"seq":3}`, sdk.CodeEnvelopeInvalid, `"seq"`},
		{"ignorable false", `{"type":"a/b","data":1,"ignorable":false}`, sdk.CodeEnvelopeInvalid, "got false"},
		{"bad surfaceOp", `{"type":"a/b","data":1,"surfaceOp":"prepend"}`, sdk.CodeSurfaceOpInvalid, `"prepend"`},
		{"replace without end", `{"type":"a/b","data":1,"surfaceOp":{"op":"replace","startSeq":1}}`, sdk.CodeSurfaceOpInvalid, "startSeq"},
		{"sources not an array", `{"type":"a/b","data":1,"sourceEventSeqs":3}`, sdk.CodeSourcesInvalid, "got 3"},
		{"negative source", `{"type":"a/b","data":1,"sourceEventSeqs":[1,-2]}`, sdk.CodeSourcesInvalid, "sourceEventSeqs[1] is -2"},
		{"duplicate member", `{"type":"a/b","type":"a/c","data":1}`, sdk.CodeJSONDuplicateKey, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := appendinput.Parse([]byte(c.line))
			if !errors.Is(err, c.code) {
				t.Fatalf("%s: got %v, want %s", c.line, err, c.code)
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("%v does not say %q", err, c.says)
			}
		})
	}
}

// The reader numbers lines from 1, strips "\n" and "\r\n", returns a last
// line without an ending, and refuses a line over the limit.
func TestReaderLines(t *testing.T) {
	r := appendinput.NewReader(strings.NewReader("a\r\n\nbc\nlast"), 4)
	var got []string
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Repeat("#", r.Line())+string(l))
	}
	if strings.Join(got, ",") != "#a,##,###bc,####last" {
		t.Fatalf("lines %q", got)
	}
	r = appendinput.NewReader(bytes.NewReader([]byte("12345\nok\n")), 4)
	if _, err := r.Next(); !errors.Is(err, sdk.CodeEventTooLarge) || r.Line() != 1 {
		t.Fatalf("a 5-byte line with limit 4: %v (line %d)", err, r.Line())
	}
}

// FuzzParse: no input makes Parse panic or fail without a code; an
// accepted line's data is canonical JSON, and parsing the line again gives
// the same input.
func FuzzParse(f *testing.F) {
	// The seed corpus is testdata/fuzz/FuzzParse.
	f.Fuzz(func(t *testing.T, line []byte) {
		in, err := appendinput.Parse(line)
		if err != nil {
			if sdk.CodeOf(err) == "" {
				t.Fatalf("an error without a code: %v", err)
			}
			return
		}
		if in.Data == nil {
			t.Fatalf("accepted %q without data: %+v", line, in)
		}
		// data is handed on in canonical form: valid lossless JSON that a
		// parse leaves as it is.
		doc, err := jsonv.Parse(in.Data, jsonv.Options{})
		if err != nil || !bytes.Equal(doc.Root().Bytes(), in.Data) {
			t.Fatalf("accepted %q with data %s that is not canonical JSON: %v", line, in.Data, err)
		}
		again, err := appendinput.Parse(line)
		if err != nil || !bytes.Equal(again.Data, in.Data) || again.Type != in.Type || again.Ignorable != in.Ignorable {
			t.Fatalf("a second parse differs: %+v %v", again, err)
		}
	})
}
