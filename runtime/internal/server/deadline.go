package server

import (
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// bodyDeadlines bounds how long a request body may take to arrive without
// cutting calls that legitimately last: the http.Server's ReadTimeout
// bounds the request up to the end of its first message; after that, for
// a body framed as messages (gRPC, gRPC-Web, Connect streaming), each
// message must arrive within readTimeout of its first byte and the next
// one must start within idleTimeout; once the body has ended there is no
// read deadline at all, so a long answer (a followed Events stream, a slow
// flush) is never cut by it. An NDJSON body (a /v1 append) is framed by
// its lines the same way: each line within readTimeout of its first byte,
// the next within idleTimeout. A Connect unary body (not framed) just has
// to arrive within the ReadTimeout.
type bodyDeadlines struct {
	readTimeout, idleTimeout time.Duration
}

// wrap replaces r's body with one that moves the read deadline as the body
// arrives; w is the call's response writer, whose ResponseController sets
// the deadline (on an HTTP/1 connection or an HTTP/2 stream alike).
func (d bodyDeadlines) wrap(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, d: d, w: w, http1: r.ProtoMajor == 1, rc: http.NewResponseController(w), framed: framedBody(r), lines: lineBody(r)}
}

// framedBody reports whether a request's body is a sequence of
// length-prefixed messages: every gRPC and gRPC-Web call, and Connect's
// streaming calls.
func framedBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/grpc") || strings.HasPrefix(ct, "application/connect+")
}

// lineBody reports whether a request's body is NDJSON, framed by lines.
func lineBody(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-ndjson")
}

// deadlineBody is a request body that sets the read deadline as it is read
// (see bodyDeadlines). Each message starts with a flags byte and a 4-byte
// big-endian length.
type deadlineBody struct {
	io.ReadCloser
	d      bodyDeadlines
	w      http.ResponseWriter
	http1  bool
	rc     *http.ResponseController
	framed bool
	lines  bool // NDJSON: a chunk ending in a line end completes a message
	ended  bool
	prefix [5]byte
	nhdr   int    // bytes of the current message's prefix seen; 0 between messages
	left   uint32 // bytes of the current message's payload still to come
}

// Read reads the body and moves the deadline: to none at the end of the
// body, to readTimeout after a message's first byte, to idleTimeout after
// a message's last byte.
func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.ended {
		return n, err
	}
	if errors.Is(err, io.EOF) {
		b.ended = true
		b.set(time.Time{})
		return n, err
	}
	if err != nil && b.http1 {
		// What is left of the body on the connection is unknown (a
		// client cut off by the deadline is still sending it), so the
		// connection cannot carry another request: it closes after the
		// answer.
		b.w.Header().Set("Connection", "close")
	}
	if b.lines && n > 0 {
		if p[n-1] == '\n' {
			b.set(time.Now().Add(b.d.idleTimeout))
		} else {
			b.set(time.Now().Add(b.d.readTimeout))
		}
		return n, err
	}
	if !b.framed || n == 0 {
		return n, err
	}
	started, completed := b.scan(p[:n])
	now := time.Now()
	switch {
	case b.nhdr > 0 && started:
		b.set(now.Add(b.d.readTimeout))
	case b.nhdr == 0 && completed:
		b.set(now.Add(b.d.idleTimeout))
	}
	return n, err
}

// scan follows the message framing through chunk; it reports whether a
// message started and whether one ended in it.
func (b *deadlineBody) scan(chunk []byte) (started, completed bool) {
	for len(chunk) > 0 {
		if b.nhdr < len(b.prefix) {
			if b.nhdr == 0 {
				started = true
			}
			c := copy(b.prefix[b.nhdr:], chunk)
			b.nhdr += c
			chunk = chunk[c:]
			if b.nhdr < len(b.prefix) {
				return started, completed
			}
			b.left = binary.BigEndian.Uint32(b.prefix[1:])
		}
		c := uint32(min(len(chunk), int(min(b.left, 1<<30))))
		b.left -= c
		chunk = chunk[c:]
		if b.left == 0 {
			b.nhdr = 0
			completed = true
		}
	}
	return started, completed
}

// set sets the read deadline; a writer that cannot (none of the server's)
// keeps the server's.
func (b *deadlineBody) set(t time.Time) {
	_ = b.rc.SetReadDeadline(t)
}
