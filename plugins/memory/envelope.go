package memory

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// seqPrefix is how every canonical envelope starts (docs/format.md member order).
const seqPrefix = `{"seq":`

// envelopeSeq reads the seq of a canonical envelope from its prefix
// {"seq":N, without parsing the rest: N is an integer-form literal in
// 0 … MaxSeq with no sign, no leading zero and no fraction or exponent. ok
// is false for anything else.
func envelopeSeq(ev []byte) (seq int64, ok bool) {
	const maxDigits = 16 // len("9007199254740991")
	if len(ev) < len(seqPrefix)+2 || string(ev[:len(seqPrefix)]) != seqPrefix {
		return 0, false
	}
	i := len(seqPrefix)
	start := i
	for i < len(ev) && i-start <= maxDigits && ev[i] >= '0' && ev[i] <= '9' {
		seq = seq*10 + int64(ev[i]-'0')
		i++
	}
	digits := i - start
	switch {
	case digits == 0 || digits > maxDigits || seq > sdk.MaxSeq:
		return 0, false
	case digits > 1 && ev[start] == '0':
		return 0, false
	case i >= len(ev) || ev[i] != ',':
		return 0, false
	}
	return seq, true
}

// checkBatch requires every event to be an envelope whose seq is firstSeq
// plus its index.
func checkBatch(firstSeq sdk.Seq, events [][]byte) *sdk.Error {
	for i, ev := range events {
		seq, ok := envelopeSeq(ev)
		if !ok {
			head := ev
			if len(head) > 32 {
				head = head[:32]
			}
			return sdk.Errorf(sdk.CodeEnvelopeInvalid, op, "batch event %d does not start with {\"seq\":<integer>, as a canonical envelope does; it starts %s", i, strconv.Quote(string(head))).WithIndex(i)
		}
		if want := int64(firstSeq) + int64(i); seq != want {
			return sdk.Errorf(sdk.CodeSeqNotContiguous, op, "batch event %d has seq %d; expected %d (firstSeq %d + %d)", i, seq, want, firstSeq, i).WithSeq(seq).WithIndex(i)
		}
	}
	return nil
}
