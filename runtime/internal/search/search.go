package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Query says what Scan looks for.
type Query struct {
	// Text is what a message must contain; it must not be empty.
	Text string
	// CaseSensitive matches Text byte for byte. By default ASCII letters
	// match in either case (other characters exactly).
	CaseSensitive bool
	// Session limits the scan to one session; "" scans every stored one.
	Session string
	// Types limits the hits to these event types, each one of Types();
	// nil means all of them.
	Types []string
	// Limit stops the scan after this many hits; 0 reports all of them.
	Limit int
	// Workers is how many sessions are read at once; 0 means GOMAXPROCS.
	Workers int
}

// Hit is one event whose message contains the text.
type Hit struct {
	Session string
	Seq     sdk.Seq
	Time    int64  // the event's time, epoch ms
	Type    string // its event type
	// Snippet is the message text around the first match, on one line,
	// with "…" where it was cut.
	Snippet string
}

// Stats says what a scan read.
type Stats struct {
	Sessions int   // sessions read
	Events   int64 // stored events tested
	Bytes    int64 // canonical envelope bytes tested
}

// searchable are the event types that record a message, in the order
// Types returns them.
var searchable = []string{
	session.TypeUserMessage, session.TypeAssistantMessage, session.TypeToolResult,
	session.TypeSystemMessage, session.TypeDeveloperMessage,
}

// Types returns the event types a search can report: those that record a
// message. The slice is fresh.
func Types() []string { return slices.Clone(searchable) }

// Snippet bounds: how much text is kept before and after the match.
const (
	snippetBefore = 40
	snippetAfter  = 80
)

// Validate checks q as Scan does: USAGE for an empty Text, a negative
// Limit or Workers, or a type that is not one of Types().
func (q Query) Validate() error {
	if q.Text == "" {
		return &sdk.Error{Code: sdk.CodeUsage, Op: "search", Detail: "the search text is empty"}
	}
	if q.Limit < 0 || q.Workers < 0 {
		return &sdk.Error{Code: sdk.CodeUsage, Op: "search", Detail: fmt.Sprintf("limit %d and workers %d must not be negative", q.Limit, q.Workers)}
	}
	for _, t := range q.Types {
		if !slices.Contains(searchable, t) {
			return &sdk.Error{Code: sdk.CodeUsage, Op: "search", Detail: fmt.Sprintf("unknown type %q; a search reports %s", t, strings.Join(searchable, ", "))}
		}
	}
	return nil
}

// Scan calls fn with the hits of q in p, newest first (see the package
// doc), from a single goroutine, while it goes on reading. It stops at
// q.Limit hits, when fn returns an error (which Scan returns), or when ctx
// ends. A session that cannot be read does not stop the scan: its error,
// naming it, is joined into the error Scan returns after the other hits.
// Query.Session names a session that must exist (SESSION_NOT_FOUND).
func Scan(ctx context.Context, p sdk.Persistence, q Query, fn func(Hit) error) (Stats, error) {
	var st Stats
	if err := q.Validate(); err != nil {
		return st, err
	}
	ids, errs, err := targets(ctx, p, q.Session)
	if err != nil {
		return st, err
	}
	workers := q.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	m := newMatcher(q)
	results := make([]chan result, len(ids))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	// At most workers sessions are read or waiting to be reported at once:
	// a token is taken before a session is read and given back when its
	// hits have been reported.
	tokens := make(chan struct{}, workers)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, id := range ids {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] <- scanSession(ctx, p, id, m, q.Limit)
			}()
		}
	}()
	reported := 0
	for i := range ids {
		var r result
		select {
		case r = <-results[i]:
		case <-ctx.Done():
			return st, errors.Join(append(errs, context.Cause(ctx))...)
		}
		<-tokens
		st.Sessions++
		st.Events += r.events
		st.Bytes += r.bytes
		if r.err != nil {
			if ctx.Err() != nil {
				return st, errors.Join(append(errs, r.err)...)
			}
			errs = append(errs, fmt.Errorf("session %q: %w", ids[i], r.err))
		}
		for j := len(r.hits) - 1; j >= 0; j-- {
			if err := fn(r.hits[j]); err != nil {
				return st, err
			}
			reported++
			if q.Limit > 0 && reported == q.Limit {
				return st, errors.Join(errs...)
			}
		}
	}
	return st, errors.Join(errs...)
}

// targets returns the ids to scan, newest first: only id when it is set,
// else every listed session. The errors are those of listed sessions that
// cannot be read.
func targets(ctx context.Context, p sdk.Persistence, id string) ([]string, []error, error) {
	if id != "" {
		if _, err := p.Stat(ctx, id); err != nil {
			return nil, nil, err
		}
		return []string{id}, nil, nil
	}
	var entries []sdk.ListEntry
	var errs []error
	err := p.List(ctx, func(e sdk.ListEntry) error {
		if e.Err != nil {
			errs = append(errs, fmt.Errorf("session %q: %w", e.ID, e.Err))
			return nil
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(entries, func(a, b sdk.ListEntry) int {
		return cmp.Or(cmp.Compare(b.Header.CreatedAt, a.Header.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	return ids, errs, nil
}

// result is what one session's scan found.
type result struct {
	hits          []Hit // in seq order; at most the last limit when limit > 0
	events, bytes int64
	err           error
}

// scanSession reads session id through a read open and returns its hits.
func scanSession(ctx context.Context, p sdk.Persistence, id string, m *matcher, limit int) (r result) {
	o, err := p.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		r.err = err
		return r
	}
	defer func() {
		if err := p.Close(context.WithoutCancel(ctx), o.Handle); err != nil && r.err == nil {
			r.err = err
		}
	}()
	var fold []byte
	r.err = p.Read(ctx, o.Handle, 0, -1, func(events [][]byte) error {
		for _, env := range events {
			r.events++
			r.bytes += int64(len(env))
			var ok bool
			if ok, fold = m.prefilter(env, fold); !ok {
				continue
			}
			h, ok, err := m.hit(id, env)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if limit > 0 && len(r.hits) == limit {
				r.hits = append(r.hits[:0], r.hits[1:]...)
			}
			r.hits = append(r.hits, h)
		}
		return nil
	})
	return r
}

// matcher tests envelopes and messages for one query; it is read-only
// once made, so the sessions' scans share it.
type matcher struct {
	text   string // the text, lower-cased when fold
	needle []byte // text as it appears inside a JSON string, lower-cased when fold
	fold   bool
	types  []string
}

// newMatcher prepares q for the scans. Folding is skipped when the text
// has no ASCII letter, as it would change nothing.
func newMatcher(q Query) *matcher {
	m := &matcher{text: q.Text, types: q.Types}
	if !q.CaseSensitive && strings.ContainsFunc(q.Text, isASCIILetter) {
		m.fold = true
		m.text = string(lowerASCII(nil, []byte(q.Text)))
	}
	quoted := jsonv.AppendString(nil, m.text)
	m.needle = quoted[1 : len(quoted)-1]
	return m
}

func isASCIILetter(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }

// prefilter reports whether env may hold the text; buf is scratch space
// for the folded envelope, returned for reuse.
func (m *matcher) prefilter(env, buf []byte) (bool, []byte) {
	if !m.fold {
		return bytes.Contains(env, m.needle), buf
	}
	buf = lowerASCII(buf[:0], env)
	return bytes.Contains(buf, m.needle), buf
}

// lowerASCII appends src to dst with ASCII letters in lower case. It
// works eight bytes at a time (SWAR: a byte is upper case when adding
// 0x80-'A' carries into its top bit and adding 0x80-'Z'-1 does not, for
// bytes below 0x80), several times faster than a byte loop over a table.
func lowerASCII(dst, src []byte) []byte {
	const ones = 0x0101010101010101
	n := len(dst)
	dst = slices.Grow(dst, len(src))[:n+len(src)]
	out := dst[n:]
	i := 0
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		h := x & (0x7f * ones)
		upper := (h + (0x80-'A')*ones) &^ (h + (0x80-'Z'-1)*ones) &^ x & (0x80 * ones)
		binary.LittleEndian.PutUint64(out[i:], x|upper>>2)
	}
	for ; i < len(src); i++ {
		c := src[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return dst
}

// content is the part of a message a search reads.
type content struct {
	Content []struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"content"`
}

// hit parses an envelope that passed the pre-filter and returns its hit
// when the event is of a wanted type and its message holds the text. A
// stored envelope that does not parse is CORRUPT_LOG.
func (m *matcher) hit(id string, env []byte) (Hit, bool, error) {
	e, err := session.ParseEnvelope(env, 0)
	if err != nil {
		return Hit{}, false, &sdk.Error{Code: sdk.CodeCorruptLog, Op: "search", SessionID: id, Detail: "a stored envelope does not parse", Err: err}
	}
	if !slices.Contains(searchable, e.Type()) || len(m.types) > 0 && !slices.Contains(m.types, e.Type()) {
		return Hit{}, false, nil
	}
	mv, ok := session.MessageOf(e, nil)
	if !ok {
		return Hit{}, false, nil
	}
	var c content
	if err := mv.Decode(&c); err != nil {
		return Hit{}, false, nil // a message of another shape says nothing searchable
	}
	for _, b := range c.Content {
		var s string
		switch b.Type {
		case "text":
			s = b.Text
		case "tool-call":
			s = b.Name + " " + b.Arguments
		default:
			continue
		}
		if snip, ok := m.snippet(s); ok {
			return Hit{Session: id, Seq: e.Seq(), Time: e.Time(), Type: e.Type(), Snippet: snip}, true, nil
		}
	}
	return Hit{}, false, nil
}

// snippet returns s around the first match of the text, on one line.
func (m *matcher) snippet(s string) (string, bool) {
	hay := s
	if m.fold {
		hay = string(lowerASCII(nil, []byte(s)))
	}
	i := strings.Index(hay, m.text)
	if i < 0 {
		return "", false
	}
	start, end := i-snippetBefore, i+len(m.text)+snippetAfter
	prefix, suffix := "…", "…"
	if start <= 0 {
		start, prefix = 0, ""
	}
	if end >= len(s) {
		end, suffix = len(s), ""
	}
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	line := strings.Join(strings.Fields(s[start:end]), " ")
	return prefix + line + suffix, true
}

// MarshalJSON writes a hit as {"session","seq","time","type","snippet"}.
func (h Hit) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Session string  `json:"session"`
		Seq     sdk.Seq `json:"seq"`
		Time    int64   `json:"time"`
		Type    string  `json:"type"`
		Snippet string  `json:"snippet"`
	}{h.Session, h.Seq, h.Time, h.Type, h.Snippet})
}
