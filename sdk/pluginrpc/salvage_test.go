package pluginrpc_test

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// salvageClient serves b over in-memory gRPC at the smallest RPC limit and
// returns the host's SalvageReader.
func salvageClient(t *testing.T, b sdk.Persistence) sdk.SalvageReader {
	t.Helper()
	c := plugintest.Connect(t, pluginrpc.ServeConfig{
		Info:        sdk.Info{Name: "store", Version: "0.1", Kinds: []sdk.Kind{sdk.KindPersistence}},
		Persistence: b,
		RPCMaxBytes: 4 << 10,
	})
	p, err := c.Persistence()
	if err != nil {
		t.Fatal(err)
	}
	sr, ok := p.(sdk.SalvageReader)
	if !ok {
		t.Fatalf("the persistence client %T is no sdk.SalvageReader", p)
	}
	return sr
}

// storeEvents stores n events of about size bytes each as session id.
func storeEvents(t *testing.T, b *memory.Backend, id string, n, size int) [][]byte {
	t.Helper()
	ctx := context.Background()
	o, err := b.Create(ctx, testHeader(id))
	if err != nil {
		t.Fatal(err)
	}
	var evs [][]byte
	for i := range n {
		evs = append(evs, event(i, size))
	}
	if _, err := b.Append(ctx, o.Handle, 0, evs); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(ctx, o.Handle); err != nil {
		t.Fatal(err)
	}
	return evs
}

// The valid prefix, the damage and a tail larger than the gRPC message
// limit (the RPC limit plus its 1 MiB headroom) cross the wire exactly as
// the backend returns them in process.
func TestReadDamagedRoundTrip(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	evs := storeEvents(t, b, "s1", 800, 1500) // the tail: 780 events, ~1.2 MB
	if err := memory.HooksOf(b).Damage("s1", 20, "checksum mismatch in frame 3"); err != nil {
		t.Fatal(err)
	}
	var direct [][]byte
	want, err := b.ReadDamaged(ctx, "s1", func(c [][]byte) error { direct = append(direct, c...); return nil })
	if err != nil {
		t.Fatal(err)
	}
	sr := salvageClient(t, b)
	var got [][]byte
	chunks := 0
	d, err := sr.ReadDamaged(ctx, "s1", func(c [][]byte) error {
		chunks++
		got = append(got, c...)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadDamaged over gRPC: %v", err)
	}
	if !reflect.DeepEqual(got, evs[:20]) || !reflect.DeepEqual(direct, got) {
		t.Fatalf("valid prefix over gRPC = %d events; want the 20 before the damage", len(got))
	}
	if chunks < 2 {
		t.Errorf("the 30 KB prefix came in %d chunk(s); want several below the limit", chunks)
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("ReadDamaged over gRPC = %+v\nin process = %+v", d, want)
	}
	if !d.Corrupt || d.ValidEvents != 20 || d.Damage.IntactEventsExcluded != 779 || len(d.Damage.Tail) < 1<<20+4<<10 {
		t.Fatalf("damage = %+v", d)
	}
}

func TestReadDamagedOfAnIntactLogOverGRPC(t *testing.T) {
	b := memory.New()
	evs := storeEvents(t, b, "s1", 3, 10)
	var got [][]byte
	d, err := salvageClient(t, b).ReadDamaged(context.Background(), "s1", func(c [][]byte) error { got = append(got, c...); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if d.Corrupt || d.ValidEvents != 3 || !d.Header.Equal(testHeader("s1")) || d.Damage.Tail != nil || !reflect.DeepEqual(got, evs) {
		t.Fatalf("ReadDamaged = %+v, %d events", d, len(got))
	}
}

func TestReadDamagedErrorsOverGRPC(t *testing.T) {
	ctx := context.Background()
	sr := salvageClient(t, memory.New())
	_, err := sr.ReadDamaged(ctx, "absent", func([][]byte) error { return nil })
	if e := wantCode(t, err, sdk.CodeSessionNotFound); !strings.Contains(e.Error(), "absent") {
		t.Errorf("SESSION_NOT_FOUND does not name the session: %v", e)
	}
	_, err = sr.ReadDamaged(ctx, "bad\x00id", func([][]byte) error { return nil })
	wantCode(t, err, sdk.CodeInvalidSessionID)
}

// An error from fn ends the read and is returned as is.
func TestReadDamagedStopsOnCallbackError(t *testing.T) {
	b := memory.New()
	storeEvents(t, b, "s1", 40, 1000)
	stop := sdk.Errorf(sdk.CodeUsage, "test", "enough")
	calls := 0
	_, err := salvageClient(t, b).ReadDamaged(context.Background(), "s1", func([][]byte) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Fatalf("ReadDamaged = %v after %d calls; want fn's error after 1", err, calls)
	}
}

// A backend without the capability answers Unimplemented, which the host
// reports as a final CONFIG_INVALID naming the missing operation.
func TestReadDamagedOfABackendWithoutTheCapability(t *testing.T) {
	p := persistenceClient(t, newFakeStore(), 0)
	_, err := p.(sdk.SalvageReader).ReadDamaged(context.Background(), "s1", func([][]byte) error { return nil })
	e := wantCode(t, err, sdk.CodeConfigInvalid)
	if !strings.Contains(e.Detail, "ReadDamaged") || sdk.Retryable(err) {
		t.Fatalf("error = %v (retryable %v); want a final error naming ReadDamaged", err, sdk.Retryable(err))
	}
	if !bytes.Contains([]byte(e.Error()), []byte("salvage")) {
		t.Errorf("error %v does not say salvage is what cannot be done", e)
	}
}

// CopyPrefix of a backend without the capability answers Unimplemented,
// which the client reports as a final CONFIG_INVALID naming the operation.
func TestCopyPrefixOfABackendWithoutTheCapability(t *testing.T) {
	p := persistenceClient(t, newFakeStore(), 0)
	_, err := p.(sdk.PrefixCopier).CopyPrefix(context.Background(), "s1", 0, testHeader("c"))
	e := wantCode(t, err, sdk.CodeConfigInvalid)
	if !strings.Contains(e.Detail, "CopyPrefix") || sdk.Retryable(err) {
		t.Fatalf("error = %v (retryable %v); want a final error naming CopyPrefix", err, sdk.Retryable(err))
	}
}
