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

// Rendering is a session state rendered in a format: the body, and what a
// provider format left out of it because no provider accepts it where it
// stands (docs/providers.md, Omissions). Both come from one read of the
// session, so they describe the same state.
type Rendering struct {
	Body    []byte
	Omitted []Omission // nil for the logbook and markdown formats, which keep everything
}

// Messages renders the derived messages of s in format
// (provider.MessageFormats). Its errors are provider.Messages' and the
// session's PROJECTION_REMOVED, with the session id, and the seq of the
// message an error names; another format is USAGE.
func Messages(format string, s *session.Session) (Rendering, error) {
	if err := provider.CheckFormat(op, "format", format, provider.MessageFormats()); err != nil {
		return Rendering{}, err
	}
	return render(s, format, func(msgs [][]byte) ([]byte, error) { return provider.Messages(format, msgs) })
}

// Request renders the request a model would be sent right after the last
// event of s, in format (provider.RequestFormats): {header, context,
// messages} for logbook, else the provider's body. Its errors are
// provider.Request's (REQUEST_HEADER_MISSING with Meta "format" and "at",
// TOOL_CALLS_PENDING, TOOL_CALL_REPEATED, …) and the session's
// PROJECTION_REMOVED, with the session id, and the seq of the message an
// error names; another format is USAGE.
func Request(format string, s *session.Session) (Rendering, error) {
	if err := provider.CheckFormat(op, "format", format, provider.RequestFormats()); err != nil {
		return Rendering{}, err
	}
	r, err := render(s, format, func(msgs [][]byte) ([]byte, error) {
		return provider.Request(format, provider.RequestParts{
			Header:   s.AppendRequestHeaderJSON(nil),
			Context:  s.AppendRequestContextJSON(nil),
			Messages: msgs,
		})
	})
	if sdk.CodeOf(err) == sdk.CodeRequestHeaderMissing {
		return Rendering{}, headerMissing(s, format)
	}
	return r, err
}

// render reads the derived messages of s once, renders them with body and,
// for a provider format, lists what it left out.
func render(s *session.Session, format string, body func(msgs [][]byte) ([]byte, error)) (Rendering, error) {
	msgs, seqs, err := messages(s)
	if err != nil {
		return Rendering{}, err
	}
	b, err := body(msgs)
	if err != nil {
		return Rendering{}, named(s, err, seqs)
	}
	r := Rendering{Body: b}
	if format == provider.FormatLogbook || format == provider.FormatMarkdown {
		return r, nil
	}
	om, err := provider.Omissions(msgs)
	if err != nil {
		return Rendering{}, named(s, err, seqs)
	}
	for _, o := range om {
		r.Omitted = append(r.Omitted, Omission{Seq: seqs[o.Index], Omission: o})
	}
	return r, nil
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
// provider format, a state of the log rather than a bad payload, said for
// the session: Meta "format", and "at" (the last event's seq) when the log
// has events.
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

// Omission is a provider.Omission with the seq of its message's node.
type Omission struct {
	Seq sdk.Seq
	provider.Omission
}

// String says what was left out: `seq 7: tool result for call "c1" left
// out (TOOL_RESULT_UNMATCHED)`.
func (o Omission) String() string {
	return o.Describe("seq " + strconv.FormatInt(int64(o.Seq), 10))
}
