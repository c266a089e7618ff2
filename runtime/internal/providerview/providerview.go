// Package providerview renders a session's derived views through package
// provider: the messages and the next request in any of its formats, with
// an error that names a message (provider's Index) naming the event
// (Seq) of the message's surface node too. Every door that renders a
// session state calls it, so the rule and the error are written once.
package providerview

import (
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
	b, err := provider.Request(format, provider.RequestParts{
		Header:   s.AppendRequestHeaderJSON(nil),
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
