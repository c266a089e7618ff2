package session

import (
	"context"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// BatchOptions tune AppendBatch.
type BatchOptions struct {
	// ExpectedLen, when set, is the log length the batch must find. It is
	// compared under the append lock, so no other append can land between
	// the check and the batch's first event; another length refuses the
	// whole batch with SEQ_CONFLICT (Meta "expected" and "actual") and
	// nothing is appended. A caller that retries a batch with the length it
	// first expected therefore never appends it twice.
	ExpectedLen *sdk.Offset
}

// Batch is what AppendBatch appended.
type Batch struct {
	// Start is the log length when the batch began: the seq of its first
	// event, or of the event it would have appended.
	Start sdk.Offset
	// Events are the appended events, in order, with seqs Start, Start+1, ….
	Events []Event
}

// AppendBatch appends ins in order, each as its own event exactly as Append
// would, under one hold of the append lock: no other append lands between
// them, so their seqs are consecutive from Batch.Start. Unlike AppendGroup
// it is not atomic: at the first rejected input it stops with that input's
// error (Index set to its position in ins), and the events before it stay
// committed and are returned with the error.
func (s *Session) AppendBatch(ctx context.Context, ins []AppendInput, o BatchOptions) (Batch, error) {
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	b := Batch{Start: sdk.Offset(s.nextSeq())}
	if err := s.writable(); err != nil {
		return b, err
	}
	if want := o.ExpectedLen; want != nil && *want != b.Start {
		return b, SeqConflict(s.id, *want, b.Start)
	}
	if len(ins) > 0 {
		b.Events = make([]Event, 0, len(ins))
	}
	for i := range ins {
		e, _, _, err := s.appendLocked(ctx, -1, ins[i:i+1], "")
		if err != nil {
			if se, ok := err.(*sdk.Error); ok {
				err = se.WithIndex(i)
			}
			return b, err
		}
		b.Events = append(b.Events, e)
	}
	return b, nil
}

// SeqConflict is the SEQ_CONFLICT of an append that expected the log of
// session id to be want events long and found got events: nothing was
// appended. Meta "expected" and "actual" carry both lengths.
func SeqConflict(id string, want, got sdk.Offset) *sdk.Error {
	w, g := strconv.FormatInt(int64(want), 10), strconv.FormatInt(int64(got), 10)
	return &sdk.Error{Code: sdk.CodeSeqConflict, Op: "append", SessionID: id,
		Detail: "the append expected a log length of " + w + " but the log holds " + g + "; nothing was appended",
		Meta:   map[string]string{"expected": w, "actual": g}}
}
