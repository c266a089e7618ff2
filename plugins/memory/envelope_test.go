package memory

import (
	"strconv"
	"testing"
)

func TestEnvelopeSeqReadsOnlyTheCanonicalPrefix(t *testing.T) {
	for _, c := range []struct {
		in   string
		seq  int64
		ok   bool
		rule string
	}{
		{`{"seq":0,"time":1,"type":"a/b","data":{}}`, 0, true, "zero"},
		{`{"seq":42,`, 42, true, "the prefix is all that is read"},
		{`{"seq":9007199254740991,`, 9007199254740991, true, "MaxSeq"},
		{`{"seq":9007199254740992,`, 0, false, "beyond MaxSeq"},
		{`{"seq":99999999999999999,`, 0, false, "17 digits"},
		{`{"seq":07,`, 0, false, "leading zero"},
		{`{"seq":-1,`, 0, false, "negative"},
		{`{"seq":1.0,`, 0, false, "fraction"},
		{`{"seq":1e2,`, 0, false, "exponent"},
		{`{"seq":1}`, 0, false, "no comma: no other members"},
		{`{"seq":1`, 0, false, "cut"},
		{`{"seq":,`, 0, false, "no digits"},
		{`{"seq":"1",`, 0, false, "string"},
		{`{ "seq":1,`, 0, false, "whitespace"},
		{`{"time":1,"seq":1,`, 0, false, "seq not first"},
		{``, 0, false, "empty"},
	} {
		seq, ok := envelopeSeq([]byte(c.in))
		if seq != c.seq || ok != c.ok {
			t.Errorf("%s: envelopeSeq(%q) = %d, %t; want %d, %t", c.rule, c.in, seq, ok, c.seq, c.ok)
		}
	}
}

// FuzzEnvelopeSeq: whatever is accepted starts with exactly the canonical
// prefix of the seq returned; nothing panics.
func FuzzEnvelopeSeq(f *testing.F) {
	for _, s := range []string{`{"seq":0,`, `{"seq":9007199254740991,"time":0}`, `{"seq":01,`, `{"seq":1}`, `{"seq":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, ok := envelopeSeq(b)
		if !ok {
			return
		}
		want := seqPrefix + strconv.FormatInt(seq, 10) + ","
		if seq < 0 || len(b) < len(want) || string(b[:len(want)]) != want {
			t.Fatalf("envelopeSeq(%q) accepted seq %d", b, seq)
		}
	})
}
