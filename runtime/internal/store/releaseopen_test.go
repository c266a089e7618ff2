package store

import (
	"context"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// slowClose is a backend whose Close of a handle waits until release is
// closed, after telling closing that it started.
type slowClose struct {
	sdk.Persistence
	closing chan struct{}
	release chan struct{}
}

func (b *slowClose) Close(ctx context.Context, h string) error {
	select {
	case b.closing <- struct{}{}:
		<-b.release
	default:
	}
	return b.Persistence.Close(ctx, h)
}

// An open of a session whose release has taken it out of the live set but
// not yet closed its backend handles (which still hold its write claim)
// waits for the release and then opens it; it is not refused as owned.
func TestOpenDuringAReleaseWaitsForItsHandlesToClose(t *testing.T) {
	b := &slowClose{Persistence: mem(), closing: make(chan struct{}), release: make(chan struct{})}
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: b})
	ctx := context.Background()
	s, err := st.Create(ctx, CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("a"))
	released := make(chan error, 1)
	go func() { released <- st.Release(ctx, s) }()
	<-b.closing // the release took s out of the live set and is closing its handle
	opened := make(chan error, 1)
	go func() {
		_, _, err := st.Open(ctx, "s")
		opened <- err
	}()
	select {
	case err := <-opened:
		t.Fatalf("Open during the release returned %v before the release closed its handle", err)
	case <-time.After(50 * time.Millisecond):
	}

	close(b.release)
	if err := <-released; err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open after the release: %v", err)
	}
}
