package service_test

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// StatStored answers from the primary backend alone: the stored header,
// and the event count when the backend knows it; a session the primary
// does not hold is SESSION_NOT_FOUND.
func TestStatStoredDescribesTheStoredSession(t *testing.T) {
	ctx := context.Background()
	svc := openMemory(t)
	s := create(t, svc, "st", 3)
	res, err := s.Flush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Fenced {
		t.Fatal("a flush that passed reports the session fenced")
	}
	st, err := svc.StatStored(ctx, "st")
	if err != nil {
		t.Fatal(err)
	}
	if st.Header.ID != "st" || (st.Events != -1 && st.Events != int64(s.Len())) {
		t.Fatalf("StatStored = %+v; want the header of st and %d events (or -1)", st, s.Len())
	}
	_, err = svc.StatStored(ctx, "absent")
	requireCode(t, err, sdk.CodeSessionNotFound)
}
