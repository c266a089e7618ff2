package envelope_test

import (
	"bytes"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// FuzzSplit: any input either splits, and then Append gives back exactly
// the same bytes and an operation member reads back as a valid id and
// count in its canonical form, or is refused with ENVELOPE_INVALID (or a JSON code) and no parts.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		`{"seq":0,"time":0,"type":"turn/start","data":{"turn":1}}`,
		`{"seq":4,"time":5,"type":"user/message","data":{},"surfaceOp":"append","operation":{"id":"op-1","count":3}}`,
		`{"seq":4,"time":5,"type":"x/y","data":1,"ignorable":true,"operation":{"id":"a b~","count":1}}`,
		`{"seq":4,"time":5,"type":"x/y","data":1,"operation":{"count":1,"id":"x"}}`,
		`{"seq":4,"time":5,"type":"x/y","data":1,"operation":{"id":"","count":0}}`,
		`{"seq":4,"time":5,"type":"x/y","data":1,"operation":{"id":"é","count":2}}`,
		`{"seq":1,"time":2,"type":"a/b","data":[],"sourceEventSeqs":[0]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, ev []byte) {
		p, err := envelope.Split("fuzz", ev)
		if err != nil {
			if sdk.ErrorOf(err) == nil {
				t.Fatalf("Split(%q) = %v; want a logbook error", ev, err)
			}
			return
		}
		if got := p.Append(nil); !bytes.Equal(got, ev) {
			t.Fatalf("Append(Split(%q)) = %q", ev, got)
		}
		if p.Operation != nil {
			doc, err := jsonv.Parse(p.Operation, jsonv.Options{})
			if err != nil {
				t.Fatalf("the operation member %q of an accepted envelope does not parse: %v", p.Operation, err)
			}
			id, count, err := envelope.Operation(doc.Root())
			if err != nil || sdk.ValidateOperationID(id) != nil || count < 1 {
				t.Fatalf("the operation member %q of an accepted envelope reads as %q, %d, %v", p.Operation, id, count, err)
			}
			if want := envelope.AppendOperation(nil, id, count); !bytes.Equal(want, append([]byte(envelope.OperationMember), p.Operation...)) {
				t.Fatalf("the operation member %q is not the canonical %q", p.Operation, want)
			}
		}
	})
}
