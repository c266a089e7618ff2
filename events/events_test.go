package events

import (
	"bytes"
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestParseEventKeepsTheEnvelope(t *testing.T) {
	b := []byte(`{"seq":4,"time":17,"type":"tool/result","data":{"n":1.0e0,"b":1,"a":2},"surfaceOp":{"op":"replace","startSeq":2,"endSeq":3},"sourceEventSeqs":[2,3],"ignorable":true}`)
	ev, err := ParseEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 4 || ev.Time != 17 || ev.Type != "tool/result" || !ev.Ignorable {
		t.Fatalf("members: %+v", ev)
	}
	if string(ev.Data) != `{"n":1.0e0,"b":1,"a":2}` || !bytes.Equal(ev.Envelope, b) {
		t.Fatalf("data %s, envelope %s", ev.Data, ev.Envelope)
	}
	if ev.SurfaceOp == nil || *ev.SurfaceOp != (SurfaceOp{Replace: true, StartSeq: 2, EndSeq: 3}) || ev.SurfaceOp.String() != `{"op":"replace","startSeq":2,"endSeq":3}` {
		t.Fatalf("surfaceOp %+v", ev.SurfaceOp)
	}
	if len(ev.SourceEventSeqs) != 2 || ev.SourceEventSeqs[1] != 3 {
		t.Fatalf("sources %v", ev.SourceEventSeqs)
	}
	ev, err = ParseEvent([]byte(`{"seq":0,"time":1,"type":"user/message","data":{},"surfaceOp":"append"}`))
	if err != nil || ev.SurfaceOp == nil || ev.SurfaceOp.Replace || ev.SurfaceOp.String() != `"append"` || ev.SourceEventSeqs != nil {
		t.Fatalf("append: %+v %v", ev, err)
	}
}

func TestParseEventRefusesWhatIsNoEnvelope(t *testing.T) {
	for _, b := range []string{``, `[]`, `{"seq":0,"time":1,"type":"x"}`, `{"time":1,"type":"x","data":1}`, `{"seq":0,"time":1,"type":"x","data":1,"surfaceOp":"prepend"}`, `{"seq":0,"time":1,"type":"x","data":1,"surfaceOp":{"op":"replace","startSeq":1}}`} {
		if _, err := ParseEvent([]byte(b)); !errors.Is(err, sdk.CodeEnvelopeInvalid) {
			t.Errorf("%q: %v, want ENVELOPE_INVALID", b, err)
		}
	}
}
