package session

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// A Control passed in Options is bound to the session New builds, and its
// operations act on that session.
func TestControlBindsTheNewSession(t *testing.T) {
	c := &Control{}
	s, _ := newTestSession(t, func(o *Options) { o.Control = c })
	c.Close()
	if !s.Closed() {
		t.Fatal("Control.Close did not close the session it was bound to")
	}
	_, err := s.Append(context.Background(), evU("u", "x"))
	requireCode(t, err, sdk.CodeSessionClosed)
}

// A Control binds one session: reusing it for a second is CONFIG_INVALID,
// naming the session it holds.
func TestControlBindsOneSession(t *testing.T) {
	c := &Control{}
	newTestSession(t, func(o *Options) { o.Control = c })
	_, err := New(restoreOpts(func(o *Options) { o.Control = c }))
	requireDetail(t, requireCode(t, err, sdk.CodeConfigInvalid), "binds one session", `"s1"`)
	_, err = RestoreEvents(context.Background(), restoreOpts(func(o *Options) { o.Control = c }), RestoreOptions{}, nil)
	requireCode(t, err, sdk.CodeConfigInvalid)
}
