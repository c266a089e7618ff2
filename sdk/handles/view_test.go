package handles_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

func TestViewClampsUntilTheRevisionChangesAndRefusesAShrink(t *testing.T) {
	var v handles.View
	v.Clamp(9, "r1")
	if end, err := v.End("test", "s1", 10, "r1", true); err != nil || end != 9 {
		t.Fatalf("End at the clamp's revision = %d, %v; want 9", end, err)
	}
	if end, err := v.End("test", "s1", 9, "r2", true); err != nil || end != 9 {
		t.Fatalf("End after a cut = %d, %v; want 9", end, err)
	}
	if end, _ := v.End("test", "s1", 12, "r1", false); end != 12 {
		t.Fatalf("the clamp outlived a revision change: end %d", end)
	}
	_, err := v.End("test", "s1", 8, "r3", true)
	persistencetest.RequireCode(t, err, sdk.CodeLogShrank, "s1", 9, 8)
	if end, err := v.End("test", "s1", 8, "r3", false); err != nil || end != 8 {
		t.Fatalf("End without advance = %d, %v; want 8 and no error", end, err)
	}
	persistencetest.RequireCode(t, v.Gone("test", "s1"), sdk.CodeLogShrank, "s1", 9)
	var fresh handles.View
	persistencetest.RequireCode(t, fresh.Gone("test", "s1"), sdk.CodeSessionNotFound, "s1")
	fresh.Saw(3)
	_, err = fresh.End("test", "s1", 2, "r", true)
	persistencetest.RequireCode(t, err, sdk.CodeLogShrank, 3, 2)
}

func TestListerListsEachIDOnceInOrder(t *testing.T) {
	var got []string
	pend := []sdk.ListEntry{{ID: "a"}, {ID: "c"}, {ID: "e"}}
	l := handles.NewLister(t.Context(), "test", pend, func(e sdk.ListEntry) error {
		got = append(got, e.ID+e.Revision)
		return nil
	})
	for _, id := range []string{"b", "c", "d"} {
		if err := l.Stored(sdk.ListEntry{ID: id, Revision: "*"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Done(); err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(got, ","); s != "a,b*,c*,d*,e" {
		t.Fatalf("listed %s; want a,b*,c*,d*,e (c once, as stored)", s)
	}
	stop := errors.New("stop")
	l = handles.NewLister(t.Context(), "test", nil, func(sdk.ListEntry) error { return stop })
	if err := l.Stored(sdk.ListEntry{ID: "x"}); !errors.Is(err, stop) {
		t.Fatalf("fn's error came back as %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	l = handles.NewLister(ctx, "test", pend, func(sdk.ListEntry) error { return nil })
	persistencetest.RequireCode(t, l.Done(), sdk.CodeIOError, "list not done")
}

func ExampleView() {
	var v handles.View
	v.Clamp(9, "rev-1") // a read open of a log whose last row is torn
	end, _ := v.End("mybackend", "s1", 10, "rev-1", true)
	fmt.Println(end)
	_, err := v.End("mybackend", "s1", 7, "rev-2", true) // the log lost events since
	fmt.Println(sdk.CodeOf(err))
	// Output:
	// 9
	// LOG_SHRANK
}

func ExampleLister() {
	pending := []sdk.ListEntry{{ID: "b"}} // created here, not stored yet
	l := handles.NewLister(context.Background(), "mybackend", pending, func(e sdk.ListEntry) error {
		fmt.Println(e.ID)
		return nil
	})
	for _, id := range []string{"a", "c"} { // the stored sessions, in id order
		_ = l.Stored(sdk.ListEntry{ID: id})
	}
	_ = l.Done()
	// Output:
	// a
	// b
	// c
}
