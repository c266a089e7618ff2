package service

import (
	"context"

	"github.com/seed-e5e476df/logbook/runtime/internal/search"
	"github.com/seed-e5e476df/logbook/sdk"
)

// SearchQuery says what Search looks for.
type SearchQuery struct {
	// Text is what a message must contain; it must not be empty.
	Text string
	// CaseSensitive matches Text byte for byte. By default ASCII letters
	// match in either case (other characters exactly).
	CaseSensitive bool
	// Session limits the scan to one session; "" scans every stored one.
	Session string
	// Types limits the hits to these event types, each one of
	// SearchTypes(); nil means all of them.
	Types []string
	// Limit stops the scan after this many hits; 0 reports all of them.
	Limit int
}

// query returns q as the scanner's query.
func (q SearchQuery) query() search.Query {
	return search.Query{Text: q.Text, CaseSensitive: q.CaseSensitive, Session: q.Session, Types: q.Types, Limit: q.Limit}
}

// Validate refuses a query Search would refuse (USAGE for an empty text
// or a type that is not one of SearchTypes, SESSION_ID_INVALID for a bad
// Session), without reading anything.
func (q SearchQuery) Validate() error { return q.query().Validate() }

// SearchTypes returns the event types whose messages Search reads.
func SearchTypes() []string { return search.Types() }

// SearchHit is one event whose message contains the text. Its JSON form
// is {session, seq, time, type, snippet}, time in RFC 3339.
type SearchHit struct {
	// Session is the id of the session the event is in.
	Session string
	// Seq is the event's seq.
	Seq  sdk.Seq
	Time int64  // the event's time, epoch ms
	Type string // its event type
	// Snippet is the message text around the first match, on one line,
	// with "…" where it was cut.
	Snippet string
}

// MarshalJSON encodes h as {session, seq, time, type, snippet}.
func (h SearchHit) MarshalJSON() ([]byte, error) { return search.Hit(h).MarshalJSON() }

// Search reads every session the primary stores (or only q.Session),
// newest first by creation and within one the latest event first, and
// calls fn with each hit as soon as it is known, from one goroutine. An
// error of fn stops the scan and is returned.
func (s *Service) Search(ctx context.Context, q SearchQuery, fn func(SearchHit) error) error {
	_, err := search.Scan(ctx, s.primary(), q.query(), func(h search.Hit) error { return fn(SearchHit(h)) })
	return err
}
