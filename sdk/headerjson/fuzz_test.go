package headerjson

import (
	"bytes"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// FuzzDecode: a stored header either decodes, and then its labels follow
// sdk.ValidateLabels and Encode of it decodes back to an equal header, or
// is refused with a logbook error.
func FuzzDecode(f *testing.F) {
	for _, h := range []sdk.Header{
		{FormatVersion: 3, ID: "s1", CreatedAt: 1700000000000},
		{FormatVersion: 3, ID: "l", CreatedAt: 5, Protocol: sdk.ProtocolLenient, Labels: map[string]string{"framework": "adk", "key": "a/b"}},
		{FormatVersion: 2, ID: "c", CreatedAt: 5, CWD: "/w", ParentSession: "p", IsSeeded: true, InheritedEventCount: 3},
	} {
		f.Add(Encode(h))
	}
	f.Add([]byte(`{"type":"session","version":3,"id":"x","createdAt":1,"labels":{},"isSeeded":false,"delegationDepth":0}`))
	f.Add([]byte(`{"type":"session","version":2,"id":"x","createdAt":1,"labels":{"a":"b"},"isSeeded":false,"delegationDepth":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Decode(b, "", "")
		if err != nil {
			if sdk.ErrorOf(err) == nil {
				t.Fatalf("Decode(%q) = %v; want a logbook error", b, err)
			}
			return
		}
		if len(h.Labels) > 0 {
			if err := sdk.ValidateLabels("fuzz", h.Labels); err != nil {
				t.Fatalf("Decode(%q) accepted labels that break the rules: %v", b, err)
			}
		}
		enc := Encode(h)
		again, err := Decode(enc, h.ID, "")
		if err != nil || !again.Equal(h) {
			t.Fatalf("Decode(Encode(Decode(%q))) = %+v, %v; want %+v", b, again, err, h)
		}
		if !bytes.Equal(Encode(again), enc) {
			t.Fatalf("Encode is not stable for %q", b)
		}
	})
}
