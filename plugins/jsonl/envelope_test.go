package jsonl

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestEnvelopesAgreesWithTheLineCheck: checking a run of lines as one JSON
// array finds exactly the first line that the one-line check refuses, with
// the same reason, whatever the lines hold (lines that are several values,
// brackets, whitespace, nesting at the depth limit).
func TestEnvelopesAgreesWithTheLineCheck(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(`{"seq":0,"time":1,"type":"t","data":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	tricky := [][]byte{
		[]byte(`1,2`), []byte(`]`), []byte(`[`), []byte(` {"seq":0,"time":1,"type":"t","data":0}`),
		[]byte(`{"seq":0,"time":1,"type":"t","data":0},{"seq":1,"time":1,"type":"t","data":0}`),
		[]byte(`{"seq":0,"time":1,"type":"t"}`), []byte(`{"seq":0,"time":1,"type":"t","data":0,"ignorable":false}`),
		[]byte(`{"seq":-0,"time":1,"type":"t","data":0}`), []byte(`{"seq":0,"time":1,"type":"t","data":0,"seq":0}`),
		[]byte(`{"seq":0.0,"time":1,"type":"t","data":0}`), []byte(`"x"`), {}, []byte("\xff"),
		deep(512), deep(513),
	}
	r := rand.New(rand.NewPCG(3, 4))
	var c, d checker
	for range 20_000 {
		n := 1 + r.IntN(6)
		lines := persistencetest.Batch(7, n)
		for i := range lines {
			if r.IntN(4) == 0 {
				lines[i] = tricky[r.IntN(len(tricky))]
			}
		}
		// Reference: line by line.
		want, wantOK := lineFault{}, true
		for i, l := range lines {
			seq, _, reason := d.envelope(l)
			if reason != "" || seq != 7+int64(i) {
				want, wantOK = lineFault{index: i, seq: seq, reason: reason}, false
				break
			}
		}
		got, ok := c.envelopes(lines, 7)
		if ok != wantOK || got != want {
			t.Fatalf("lines %q: envelopes = %+v, %t; the line check says %+v, %t", lines, got, ok, want, wantOK)
		}
	}
}
