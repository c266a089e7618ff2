package persistencetest

import (
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// variedEvents are canonical envelopes exercising every envelope member and
// the JSON a backend could mangle: non-ASCII, escapes, number literals kept
// byte for byte, nesting, member order, operation members (format v3)
// with escapes in the id.
func variedEvents() [][]byte {
	return [][]byte{
		[]byte(`{"seq":0,"time":1700000000000,"type":"turn/start","data":{"turn":1},"operation":{"id":"turn 1: \"q\" \\ ~","count":2}}`),
		[]byte(`{"seq":1,"time":1700000000001,"type":"user/message","data":{"id":"u1","role":"user","content":[{"type":"text","text":"héllo 🌍 \"q\" \\ \n\t\u0001 </script> ` + "\u2028" + `"}],"source":{"kind":"user"}},"surfaceOp":"append"}`),
		Envelope(2, "todo/write", `{"todos":[{"content":"b before a","status":"in_progress"}],"plugin:x/n":[1.50,-12.5e-3,9007199254740991,-9007199254740991,0,1E+2,{"z":null,"a":[true,false,[],{}]}]}`),
		[]byte(`{"seq":3,"time":0,"type":"user/message","data":{"id":"u3","role":"user","content":[{"type":"text","text":"again"}],"source":{"kind":"user"}},"surfaceOp":{"op":"replace","startSeq":1,"endSeq":1},"sourceEventSeqs":[1]}`),
		[]byte(`{"seq":4,"time":9007199254740991,"type":"x-future/thing","data":"just a string","surfaceOp":[1,2],"sourceEventSeqs":{"any":"json"},"ignorable":true,"operation":{"id":"x","count":9007199254740991}}`),
		Envelope(5, "plugin:acme/record", `[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]`),
		Envelope(6, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`),
	}
}

var roundTripRules = []rule{
	{name: "events-read-back-byte-equal", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := variedEvents()
		h, _ := stored(t, p, "s1", events[:1], events[1:4], events[4:])
		requireEvents(t, "write handle", ReadAll(t, p, h), events)
		closeHandle(t, p, h)
		r := open(t, p, "s1", sdk.AccessRead)
		requireEvents(t, "read handle", ReadAll(t, p, r.Handle), events)
	}},
	{name: "one-MiB-events-read-back-byte-equal", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		big := func(seq int, fill string) []byte { // 1 MiB of content
			return Envelope(seq, "todo/write", `{"todos":[{"content":"`+strings.Repeat(fill, (1<<20)/len(fill))+`","status":"pending"}]}`)
		}
		batch1 := [][]byte{Envelope(0, "turn/start", `{"turn":1}`), big(1, "a"), big(2, "é"), Envelope(3, "todo/write", `{"todos":[]}`)}
		batch2 := [][]byte{big(4, "z")}
		h, events := stored(t, p, "s1", batch1, batch2)
		closeHandle(t, p, h)
		r := open(t, p, "s1", sdk.AccessRead)
		requireEvents(t, "read all", ReadAll(t, p, r.Handle), events)
		requireEvents(t, "read [2, 3)", readRange(t, p, r.Handle, 2, 1), events[2:3])
		requireEvents(t, "read [4, end)", readRange(t, p, r.Handle, 4, -1), events[4:])
	}},
	{name: "10000-events-read-back-in-windows", run: func(t *testing.T, s *suite) {
		const n, batch = 10_000, 1_000
		p := s.backend(t)
		h := create(t, p, "s1").Handle
		var events [][]byte
		for first := 0; first < n; first += batch {
			b := Batch(first, batch)
			appendOK(t, p, h, b)
			events = append(events, b...)
		}
		closeHandle(t, p, h)
		s.requireCount(t, stat(t, p, "s1"), n)
		r := open(t, p, "s1", sdk.AccessRead)
		if r.NextSeq != n {
			t.Fatalf("Open(read) next seq %d; want %d", r.NextSeq, n)
		}
		var windows [][]byte
		for off := 0; off < n; off += 1_000 {
			windows = append(windows, readRange(t, p, r.Handle, sdk.Offset(off), 1_000)...)
		}
		requireEvents(t, "windows of 1 000", windows, events)
		requireEvents(t, "read [4321, 5098)", readRange(t, p, r.Handle, 4321, 777), events[4321:5098])
		requireEvents(t, "read [9990, end) asking for 100", readRange(t, p, r.Handle, 9990, 100), events[9990:])
		requireEvents(t, "read all", ReadAll(t, p, r.Handle), events)
	}},
	{name: "caller-and-reply-buffers-are-not-shared", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := create(t, p, "s1").Handle
		mine := Batch(0, 4)
		want := Batch(0, 4)
		appendOK(t, p, h, mine)
		for _, ev := range mine { // the caller reuses its buffers
			for i := range ev {
				ev[i] = 'x'
			}
		}
		got := ReadAll(t, p, h)
		requireEvents(t, "read after the caller overwrote its batch", got, want)
		for _, ev := range got { // the reader scribbles over its chunks
			for i := range ev {
				ev[i] = 'y'
			}
		}
		requireEvents(t, "read after the reader overwrote an earlier reply", ReadAll(t, p, h), want)
		// A kept chunk is not overwritten by later reads or appends.
		kept := ReadAll(t, p, h)
		appendOK(t, p, h, Batch(4, 3))
		ReadAll(t, p, h)
		requireEvents(t, "a kept reply after later calls", kept, want)
	}},
}
