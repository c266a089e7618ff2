package persistencetest

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

var casRules = []rule{
	{name: "stale-firstSeq-is-SEQ_CONFLICT-and-changes-nothing", run: func(t *testing.T, s *suite) {
		// Compare-and-set: a backend append with a stale firstSeq.
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 7))
		before := snap(t, p, "s1")
		_, err := p.Append(t.Context(), h, 3, Batch(3, 2))
		RequireCode(t, err, sdk.CodeSeqConflict, 3, 7)
		requireUnchanged(t, p, "s1", before)
		appendOK(t, p, h, Batch(7, 1))
	}},
	{name: "firstSeq-past-the-end-is-SEQ_CONFLICT", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 7))
		before := snap(t, p, "s1")
		_, err := p.Append(t.Context(), h, 9, Batch(9, 2))
		RequireCode(t, err, sdk.CodeSeqConflict, 9, 7)
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "nonzero-firstSeq-on-a-new-session-is-SEQ_CONFLICT", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := create(t, p, "s1").Handle
		_, err := p.Append(t.Context(), h, 5, Batch(5, 1))
		RequireCode(t, err, sdk.CodeSeqConflict, 5, 0)
		_, err = p.Stat(t.Context(), "s1")
		RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
		appendOK(t, p, h, Batch(0, 1))
	}},
	{name: "second-writer-with-a-stale-view-is-SEQ_CONFLICT", run: func(t *testing.T, s *suite) {
		// Two recovery paths can never both write seq n.
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 5))
		closeHandle(t, p, h)
		w := open(t, p, "s1", sdk.AccessWrite)
		appendOK(t, p, w.Handle, Batch(5, 2))
		closeHandle(t, p, w.Handle)
		late := open(t, p, "s1", sdk.AccessWrite)
		before := snap(t, p, "s1")
		_, err := p.Append(t.Context(), late.Handle, 5, Batch(5, 2)) // believes 5 is next
		RequireCode(t, err, sdk.CodeSeqConflict, 5, 7)
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "non-contiguous-batch-is-SEQ_NOT_CONTIGUOUS", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 5))
		before := snap(t, p, "s1")
		cases := []struct {
			name      string
			batch     [][]byte
			found, at int // the offending seq and its batch index
		}{
			{"gap inside", [][]byte{Batch(5, 1)[0], Batch(6, 1)[0], Batch(8, 1)[0]}, 8, 2},
			{"duplicate", [][]byte{Batch(5, 1)[0], Batch(5, 1)[0]}, 5, 1},
			{"first event is not firstSeq", Batch(6, 2), 6, 0},
			{"descending", [][]byte{Batch(5, 1)[0], Batch(4, 1)[0]}, 4, 1},
		}
		for _, c := range cases {
			_, err := p.Append(t.Context(), h, 5, c.batch)
			t.Logf("%s: %v", c.name, err)
			RequireCode(t, err, sdk.CodeSeqNotContiguous, c.found, c.at)
			requireUnchanged(t, p, "s1", before)
		}
		appendOK(t, p, h, Batch(5, 2)) // nothing was consumed
	}},
	{name: "element-that-is-not-an-envelope-is-ENVELOPE_INVALID", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 5))
		before := snap(t, p, "s1")
		ok5 := Batch(5, 1)[0]
		cases := []struct {
			name  string
			batch [][]byte
			at    int
		}{
			{"not JSON", [][]byte{ok5, []byte("not json")}, 1},
			{"empty", [][]byte{{}}, 0},
			{"no seq", [][]byte{[]byte(`{"time":1,"type":"todo/write","data":{"todos":[]}}`)}, 0},
			{"string seq", [][]byte{ok5, []byte(`{"seq":"6","time":1,"type":"todo/write","data":{"todos":[]}}`)}, 1},
			{"array", [][]byte{[]byte(`[5]`)}, 0},
		}
		for _, c := range cases {
			_, err := p.Append(t.Context(), h, 5, c.batch)
			t.Logf("%s: %v", c.name, err)
			RequireCode(t, err, sdk.CodeEnvelopeInvalid, c.at)
			requireUnchanged(t, p, "s1", before)
		}
		appendOK(t, p, h, Batch(5, 1))
	}},
}
