package pluginrpc_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
)

// fakeStore is a tiny map-backed sdk.Persistence: enough compare-and-set,
// ownership and handle bookkeeping to exercise the transport. It records the
// size of every Append it receives.
type fakeStore struct {
	mu       sync.Mutex
	sessions map[string]*fakeSession
	handles  map[string]*fakeHandle
	nextID   int

	appends []int // events per Append call, in order
	// readChunk, when > 0, makes Read call fn with chunks of this many events.
	readChunk int
	// failDescribe, when set, is returned by Describe.
	failDescribe error
	// block, when set, makes Append wait for ctx to end and reports it on
	// the channel.
	block chan error
	// listErr is the Err of an extra List entry "broken" when set.
	listErr error
}

type fakeSession struct {
	header sdk.Header
	events [][]byte
	rev    int
	owned  bool
}

type fakeHandle struct {
	id     string
	write  bool
	closed bool
}

func newFakeStore() *fakeStore {
	return &fakeStore{sessions: map[string]*fakeSession{}, handles: map[string]*fakeHandle{}}
}

func (f *fakeStore) newHandle(id string, write bool) string {
	f.nextID++
	h := "h" + strconv.Itoa(f.nextID)
	f.handles[h] = &fakeHandle{id: id, write: write}
	return h
}

func (f *fakeStore) handle(h string) (*fakeHandle, *fakeSession, error) {
	fh, ok := f.handles[h]
	if !ok || fh.closed {
		return nil, nil, sdk.Errorf(sdk.CodeHandleClosed, "fake", "handle %q is closed", h)
	}
	return fh, f.sessions[fh.id], nil
}

func (f *fakeStore) Describe(context.Context) (sdk.Description, error) {
	f.mu.Lock()
	fail := f.failDescribe
	f.mu.Unlock()
	if fail != nil {
		return sdk.Description{}, fail
	}
	return sdk.Description{Name: "fake", FormatVersion: sdk.FormatVersion, Compression: "none"}, nil
}

func (f *fakeStore) Create(_ context.Context, h sdk.Header) (sdk.Opened, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sessions[h.ID]; ok {
		e := sdk.Errorf(sdk.CodeSessionAlreadyExists, "fake", "session %q exists", h.ID)
		e.SessionID = h.ID
		return sdk.Opened{}, e
	}
	f.sessions[h.ID] = &fakeSession{header: h, owned: true}
	return sdk.Opened{Handle: f.newHandle(h.ID, true), Header: h, Revision: "r0"}, nil
}

func (f *fakeStore) Open(_ context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[id]
	if !ok {
		e := sdk.Errorf(sdk.CodeSessionNotFound, "fake", "no session %q", id)
		e.SessionID = id
		return sdk.Opened{}, e
	}
	write := access == sdk.AccessWrite
	if write {
		if s.owned {
			e := sdk.Errorf(sdk.CodeAlreadyOwned, "fake", "session %q has a writer", id)
			e.SessionID = id
			return sdk.Opened{}, e
		}
		s.owned = true
	}
	return sdk.Opened{
		Handle: f.newHandle(id, write), Header: s.header, NextSeq: sdk.Offset(len(s.events)),
		Revision: "r" + strconv.Itoa(s.rev), Torn: sdk.Torn{Bytes: 7, FromSeq: sdk.Seq(len(s.events)), Artifact: "torn.bin"},
	}, nil
}

func (f *fakeStore) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if block := f.block; block != nil {
		f.mu.Unlock()
		<-ctx.Done()
		block <- ctx.Err()
		f.mu.Lock()
		return sdk.Durable{}, ctx.Err()
	}
	f.appends = append(f.appends, len(events))
	fh, s, err := f.handle(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	if !fh.write {
		return sdk.Durable{}, sdk.Errorf(sdk.CodeReadOnlyHandle, "fake", "handle %q is read-only", handle)
	}
	if int(firstSeq) != len(s.events) {
		return sdk.Durable{}, sdk.Errorf(sdk.CodeSeqConflict, "fake", "firstSeq %d, stored next seq %d", firstSeq, len(s.events)).WithSession(fh.id).WithSeq(int64(firstSeq))
	}
	for _, ev := range events { // Append's buffers are the caller's (sdk.Persistence)
		s.events = append(s.events, bytes.Clone(ev))
	}
	s.rev++
	return sdk.Durable{NextSeq: sdk.Offset(len(s.events)), Revision: "r" + strconv.Itoa(s.rev)}, nil
}

func (f *fakeStore) Read(_ context.Context, handle string, offset sdk.Offset, length int64, fn func([][]byte) error) error {
	f.mu.Lock()
	_, s, err := f.handle(handle)
	var evs [][]byte
	if err == nil {
		end := int64(len(s.events))
		if length >= 0 && int64(offset)+length < end {
			end = int64(offset) + length
		}
		if int64(offset) <= end {
			evs = append(evs, s.events[offset:end]...)
		}
	}
	step := f.readChunk
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if step <= 0 {
		step = len(evs) + 1
	}
	for len(evs) > 0 {
		n := min(step, len(evs))
		if err := fn(evs[:n]); err != nil {
			return err
		}
		evs = evs[n:]
	}
	return nil
}

func (f *fakeStore) Flush(_ context.Context, handle string) (sdk.Durable, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, s, err := f.handle(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	return sdk.Durable{NextSeq: sdk.Offset(len(s.events)), Revision: "r" + strconv.Itoa(s.rev)}, nil
}

func (f *fakeStore) Close(_ context.Context, handle string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fh, ok := f.handles[handle]
	if !ok || fh.closed {
		return nil
	}
	fh.closed = true
	if fh.write {
		f.sessions[fh.id].owned = false
	}
	return nil
}

// fakeActivity is the LastActivity the fake reports for a session at
// revision rev.
func fakeActivity(rev int) int64 { return 1_700_000_000_000 + int64(rev) }

func (f *fakeStore) Stat(_ context.Context, id string) (sdk.Stat, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[id]
	if !ok {
		e := sdk.Errorf(sdk.CodeSessionNotFound, "fake", "no session %q", id)
		e.SessionID = id
		return sdk.Stat{}, e
	}
	size := int64(0)
	for _, e := range s.events {
		size += int64(len(e))
	}
	return sdk.Stat{Header: s.header, Revision: "r" + strconv.Itoa(s.rev), FormatVersion: sdk.FormatVersion, EventCount: int64(len(s.events)), SizeBytes: size,
		LastActivity: fakeActivity(s.rev)}, nil
}

func (f *fakeStore) List(_ context.Context, fn func(sdk.ListEntry) error) error {
	f.mu.Lock()
	var entries []sdk.ListEntry
	for id, s := range f.sessions {
		entries = append(entries, sdk.ListEntry{ID: id, Header: s.header, Revision: "r" + strconv.Itoa(s.rev),
			EventCount: int64(len(s.events)), LastActivity: fakeActivity(s.rev)})
	}
	if f.listErr != nil {
		entries = append(entries, sdk.ListEntry{ID: "broken", Err: f.listErr, EventCount: -1})
	}
	f.mu.Unlock()
	for _, e := range entries {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// set runs fn with the store locked, to change its knobs while served.
func (f *fakeStore) set(fn func(*fakeStore)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeStore) appendCalls() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.appends...)
}

// event returns a canonical-looking envelope of about size bytes.
func event(seq, size int) []byte {
	head := fmt.Sprintf(`{"seq":%d,"type":"x","data":"`, seq)
	pad := size - len(head) - 2
	if pad < 0 {
		pad = 0
	}
	b := make([]byte, 0, size)
	b = append(b, head...)
	for i := 0; i < pad; i++ {
		b = append(b, byte('a'+(seq+i)%26))
	}
	return append(b, `"}`...)
}
