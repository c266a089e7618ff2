package persistencetest

import (
	"bytes"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

func TestTestEnvelopesAreCanonical(t *testing.T) {
	events := append(Batch(7, 3), variedEvents()...)
	events = append(events, turnStart(0, 1), turnEnd(6, 1), Envelope(3, `odd "type"`, `{}`))
	for _, ev := range events {
		doc, err := jsonv.Parse(ev, jsonv.Options{})
		if err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
		if !bytes.Equal(doc.Buffer(), ev) {
			t.Fatalf("not canonical:\n got  %s\n want %s", ev, doc.Buffer())
		}
	}
	if got := string(Envelope(12, "turn/start", `{"turn":1}`)); got != `{"seq":12,"time":1700000000012,"type":"turn/start","data":{"turn":1}}` {
		t.Fatalf("Envelope = %s", got)
	}
	for i, ev := range Batch(7, 3) {
		if mustSeq(t, ev) != sdk.Seq(7+i) {
			t.Fatalf("Batch(7, 3)[%d] = %s", i, ev)
		}
	}
}

func TestRequireCodeMatchesWholeNumbers(t *testing.T) {
	msg := `memory: SEQ_CONFLICT: firstSeq 17 but the stored next seq is 7 (session "s-1.5")`
	for _, c := range []struct {
		values  []any
		missing []string
	}{
		{[]any{17, 7, "s-1.5"}, nil},
		{[]any{sdk.Seq(7), sdk.Offset(17)}, nil},
		{[]any{1}, []string{"1"}},       // only inside 17 and 1.5
		{[]any{5}, []string{"5"}},       // only inside 1.5
		{[]any{"1.5"}, nil},             // strings match as substrings
		{[]any{"s2"}, []string{`"s2"`}}, // absent
	} {
		if got := missingValues(msg, c.values); !slices.Equal(got, c.missing) {
			t.Errorf("missingValues(%v) = %q; want %q", c.values, got, c.missing)
		}
	}
	msg = "seq: INVALID_SEQ: offset = -1 is outside the domain; saw 9."
	if got := missingValues(msg, []any{-1, 9, 1}); !slices.Equal(got, []string{"1"}) {
		t.Errorf("missingValues(-1, 9, 1) = %q; want only 1 missing (it appears only as -1)", got)
	}
}
