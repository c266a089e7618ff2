package transfer

import (
	"bytes"
	"context"
	"errors"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// Status is the outcome of comparing one session on a primary and a
// mirror.
type Status string

// The statuses of a Comparison. Every status but StatusOK is a difference.
const (
	StatusOK            Status = "ok"             // same header, same events
	StatusMissing       Status = "missing"        // the mirror does not hold the session
	StatusHeaderDiffers Status = "header-differs" // the session headers differ
	StatusDiverged      Status = "diverged"       // an event differs (Seq names the first)
	StatusBehind        Status = "behind"         // the mirror holds a prefix of the primary's events
	StatusAhead         Status = "ahead"          // the mirror holds the primary's events and more
	StatusError         Status = "error"          // a backend failed (Detail says how)
)

// Comparison is one session of the primary compared with one mirror. Its
// JSON form is what `logbook verify --json` prints.
type Comparison struct {
	Session      string `json:"session"`
	Mirror       string `json:"mirror"`
	Status       Status `json:"status"`
	Events       int64  `json:"events"`           // the primary's stored events
	MirrorEvents int64  `json:"mirrorEvents"`     // the mirror's stored events
	Seq          *int64 `json:"seq,omitempty"`    // StatusDiverged: the first differing seq
	Detail       string `json:"detail,omitempty"` // StatusError: the error
}

// Mirror is a backend Verify compares the primary with.
type Mirror struct {
	Name        string
	Persistence sdk.Persistence
}

// Verify compares each session of ids on primary with each mirror, both
// opened read-only, event by event: one Comparison per session and mirror,
// sessions in the order given, mirrors in the order given for each. Done,
// when set, is called after each comparison. Verify stops early, returning
// what it compared, when ctx ends.
func Verify(ctx context.Context, primary sdk.Persistence, mirrors []Mirror, ids []string, done func(Comparison)) []Comparison {
	var out []Comparison
	for _, id := range ids {
		for _, m := range mirrors {
			if ctx.Err() != nil {
				return out
			}
			c := Compare(ctx, primary, m.Persistence, id)
			c.Mirror = m.Name
			out = append(out, c)
			if done != nil {
				done(c)
			}
		}
	}
	return out
}

// Compare compares session id on primary with mirror, both opened
// read-only, event by event. Mirror is left empty.
func Compare(ctx context.Context, primary, mirror sdk.Persistence, id string) Comparison {
	r := Comparison{Session: id}
	fail := func(err error) Comparison {
		r.Status, r.Detail = StatusError, err.Error()
		return r
	}
	from, err := OpenStored(ctx, primary, id)
	if err != nil {
		return fail(err)
	}
	defer from.Close()
	r.Events = from.Len()
	to, err := OpenStored(ctx, mirror, id)
	if errors.Is(err, sdk.CodeSessionNotFound) {
		r.Status = StatusMissing
		return r
	}
	if err != nil {
		return fail(err)
	}
	defer to.Close()
	r.MirrorEvents = to.Len()
	if !bytes.Equal(headerjson.Encode(from.Header()), headerjson.Encode(to.Header())) {
		r.Status = StatusHeaderDiffers
		return r
	}
	seq, err := firstDifference(ctx, from, to, min(r.Events, r.MirrorEvents))
	switch {
	case err != nil:
		return fail(err)
	case seq >= 0:
		r.Status, r.Seq = StatusDiverged, &seq
	case r.MirrorEvents < r.Events:
		r.Status = StatusBehind
	case r.MirrorEvents > r.Events:
		r.Status = StatusAhead
	default:
		r.Status = StatusOK
	}
	return r
}
