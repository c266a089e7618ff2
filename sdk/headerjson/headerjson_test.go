package headerjson

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []sdk.Header{
		{FormatVersion: 1, ID: "s1", CreatedAt: 1700000000000},
		{FormatVersion: 1, ID: "c\"hild", CreatedAt: 5, CWD: "/work", ParentSession: "s1", Origin: "subagent", DelegationDepth: 2, AgentPreset: "coder", IsSeeded: true, InheritedEventCount: 6},
	} {
		b := Encode(h)
		got, err := Decode(b, h.ID, "")
		if err != nil || got != h {
			t.Fatalf("round trip of %s: %+v %v", b, got, err)
		}
	}
	if got := string(Encode(sdk.Header{ID: "s", CreatedAt: 1})); got != `{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}` {
		t.Fatalf("canonical header: %s", got)
	}
}

func TestDecodeHeaderRules(t *testing.T) {
	cases := []struct {
		in   string
		code sdk.Code
		want string
	}{
		{`{"type":"session","version":2,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0} garbage`, sdk.CodeCorruptLog, "lossless"},
		{`{"type":"session","version":2,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}`, sdk.CodeFormatTooNew, "v2"},
		{`{"type":"session","version":0,"id":"s"}`, sdk.CodeFormatUnsupported, "v0"},
		{`{"type":"session","version":"1","id":"s"}`, sdk.CodeCorruptLog, "version"},
		{`{"type":"session","version":1,"id":"other","createdAt":1,"isSeeded":false,"delegationDepth":0}`, sdk.CodeIdentityMismatch, "other"},
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"x":1}`, sdk.CodeCorruptLog, `"x"`},
		{`{"type":"sess","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}`, sdk.CodeCorruptLog, "type"},
		{`{"type":"session","version":1,"id":"s","isSeeded":false,"delegationDepth":0}`, sdk.CodeCorruptLog, "createdAt"},
		{`{"type":"session","version":1,"id":"s","createdAt":1.5,"isSeeded":false,"delegationDepth":0}`, sdk.CodeCorruptLog, "createdAt"},
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":true,"delegationDepth":0}`, sdk.CodeCorruptLog, "inheritedEventCount"},
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"cwd":"rel"}`, sdk.CodeCorruptLog, "absolute"},
		{`{"type":"session","version":1,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"origin":"fork"}`, sdk.CodeCorruptLog, "origin"},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.in), "s", "/data/s/events.v1.jsonl")
		if !errors.Is(err, c.code) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %s naming %s", c.in, err, c.code, c.want)
		}
	}
}
