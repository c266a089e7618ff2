// Package providerview renders a session's derived views through package
// provider: the messages and the next request in any of its formats, with
// an error that names a message (provider's Index) naming the event
// (Seq) of the message's surface node too. Every door that renders a
// session state calls it, so the rule and the error are written once.
package providerview

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// op names the operation in a USAGE error.
const op = "render"

// Messages renders the derived messages of s in format
// (provider.MessageFormats). Its errors are provider.Messages' and the
// session's PROJECTION_REMOVED, with the session id, and the seq of the
// message an error names; another format is USAGE.
func Messages(format string, s *session.Session) ([]byte, error) {
	if err := provider.CheckFormat(op, "format", format, provider.MessageFormats()); err != nil {
		return nil, err
	}
	msgs, seqs, err := messages(s)
	if err != nil {
		return nil, err
	}
	b, err := provider.Messages(format, msgs)
	return b, named(s, err, seqs)
}

// Request renders the request a model would be sent right after the last
// event of s, in format (provider.RequestFormats): {header, context,
// messages} for logbook, else the provider's body. Its errors are
// provider.Request's (REQUEST_HEADER_MISSING, TOOL_CALLS_PENDING,
// TOOL_CALL_REPEATED, …) and the session's PROJECTION_REMOVED, with the
// session id, and the seq of the message an error names; another format
// is USAGE.
func Request(format string, s *session.Session) ([]byte, error) {
	if err := provider.CheckFormat(op, "format", format, provider.RequestFormats()); err != nil {
		return nil, err
	}
	msgs, seqs, err := messages(s)
	if err != nil {
		return nil, err
	}
	header := s.AppendRequestHeaderJSON(nil)
	if format != provider.FormatLogbook && string(header) == "null" {
		return nil, headerMissing(s, format)
	}
	b, err := provider.Request(format, provider.RequestParts{
		Header:   header,
		Context:  s.AppendRequestContextJSON(nil),
		Messages: msgs,
	})
	return b, named(s, err, seqs)
}

// messages returns the derived messages of s and the seq of each one's
// surface node.
func messages(s *session.Session) (msgs [][]byte, seqs []sdk.Seq, err error) {
	l, err := s.Messages()
	if err != nil {
		return nil, nil, err
	}
	seqs = make([]sdk.Seq, l.Len())
	for i, m := range l.All() {
		seqs[i] = m.NodeSeq()
	}
	return l.JSON(), seqs, nil
}

// named returns err with the session id and the seq of the message its
// index names; nil stays nil.
func named(s *session.Session, err error, seqs []sdk.Seq) error {
	if err == nil {
		return nil
	}
	err = provider.AtSeqs(err, seqs)
	if e, ok := err.(*sdk.Error); ok && e.SessionID == "" {
		return e.WithSession(s.ID())
	}
	return err
}

// headerMissing is the REQUEST_HEADER_MISSING of a request for s in a
// provider format, a state of the log rather than a bad payload: Meta
// "format", and "at" (the last event's seq) when the log has events.
func headerMissing(s *session.Session, format string) *sdk.Error {
	e := &sdk.Error{Code: sdk.CodeRequestHeaderMissing, Op: "request", SessionID: s.ID(), Meta: map[string]string{"format": format}}
	if n := s.Len(); n > 0 {
		at := strconv.FormatInt(int64(n)-1, 10)
		e.Meta["at"] = at
		e.Detail = "no request/header event up to seq " + at + ", and format " + format + " needs the model it sets; append a request/header, or ask for format logbook"
	} else {
		e.Detail = "the session holds no events yet, and format " + format + " needs the model a request/header sets; append one, or ask for format logbook"
	}
	return e
}

// Omitted lists what the provider formats leave out of the derived
// messages of s (provider.Omissions: an orphan or second tool result, a
// call answered only after another message), one line each naming the
// seq of the message's node, the call and the rule; nil when everything
// pairs up. The doors show it as a warning beside a provider rendering.
func Omitted(s *session.Session) ([]Omission, error) {
	msgs, seqs, err := messages(s)
	if err != nil {
		return nil, err
	}
	om, err := provider.Omissions(msgs)
	if err != nil || len(om) == 0 {
		return nil, named(s, err, seqs)
	}
	out := make([]Omission, len(om))
	for i, o := range om {
		out[i] = Omission{Seq: seqs[o.Index], Omission: o}
	}
	return out, nil
}

// Omission is a provider.Omission with the seq of its message's node.
type Omission struct {
	Seq sdk.Seq
	provider.Omission
}

// String says what was left out: `seq 7: tool result for call "c1" left
// out (TOOL_RESULT_UNMATCHED)`.
func (o Omission) String() string {
	what := "tool result"
	if o.Rule == sdk.CodeToolCallsUnanswered {
		what = "tool call"
	}
	return "seq " + strconv.FormatInt(int64(o.Seq), 10) + ": " + what + " for call " + strconv.Quote(o.CallID) + " left out (" + string(o.Rule) + ")"
}
