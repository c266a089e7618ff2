package session

// The JSON documents of the derived views, as `logbook messages`, `header`
// and `request` print them and the /v1 API serves them: each message,
// header and context is spliced in as its canonical bytes.

// AppendJSON appends the messages to b as a JSON array of the messages
// exactly as derived.
func (l MessageList) AppendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, m := range l.msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.json...)
	}
	return append(b, ']')
}

// JSON returns the canonical JSON of each message, in order. The byte
// slices are the list's own and must not be modified.
func (l MessageList) JSON() [][]byte {
	out := make([][]byte, len(l.msgs))
	for i, m := range l.msgs {
		out[i] = m.json
	}
	return out
}

// AppendRequestHeaderJSON appends the folded request header (its canonical
// EpochHeader) to b, or null when the log has none.
func (s *Session) AppendRequestHeaderJSON(b []byte) []byte {
	if h, ok := s.RequestHeader(); ok {
		return h.View().AppendRaw(b)
	}
	return append(b, "null"...)
}

// AppendRequestContextJSON appends the request context to b, or null when
// the log has none.
func (s *Session) AppendRequestContextJSON(b []byte) []byte {
	if c, ok := s.RequestContext(); ok {
		return c.AppendRaw(b)
	}
	return append(b, "null"...)
}

// AppendRequestJSON appends to b the request a model would be sent now:
// {"header": the folded request header or null, "context": the request
// context or null, "messages": the derived messages}.
func (s *Session) AppendRequestJSON(b []byte) ([]byte, error) {
	ml, err := s.Messages()
	if err != nil {
		return b, err
	}
	b = append(b, `{"header":`...)
	b = s.AppendRequestHeaderJSON(b)
	b = append(b, `,"context":`...)
	b = s.AppendRequestContextJSON(b)
	b = append(b, `,"messages":`...)
	return append(ml.AppendJSON(b), '}'), nil
}
