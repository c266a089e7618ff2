package persistencetest

import (
	"context"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// bare is a backend type with no optional interface; watchingBackend adds
// sdk.Watcher.
type bare struct{ sdk.Persistence }

type watchingBackend struct{ bare }

func (watchingBackend) Watch(context.Context, string, sdk.Offset, func(sdk.Offset) error) error {
	return nil
}

// watchAccessor reports the watch capability through an accessor, as a
// host's plugin proxy does.
type watchAccessor struct {
	sdk.Persistence
	has bool
}

func (a watchAccessor) Watcher() (sdk.Watcher, bool) { return watchingBackend{}, a.has }

func TestCapabilityDeclaredAndImplementedMustAgree(t *testing.T) {
	watch, _ := capabilityNamed(sdk.CapabilityWatch)
	salvage := capabilities[len(capabilities)-1]
	cases := []struct {
		name     string
		declared []string
		c        capability
		v        sdk.Persistence
		want     string // "" when they agree, else a word of the failure
	}{
		{"implemented, not declared", nil, watch, watchingBackend{}, "does not declare"},
		{"declared, not implemented", []string{sdk.CapabilityWatch}, watch, bare{}, "does not implement"},
		{"both", []string{sdk.CapabilityWatch}, watch, watchingBackend{}, ""},
		{"neither", nil, watch, bare{}, ""},
		{"salvage is declared by no plugin", nil, salvage, bare{}, ""},
		{"reported by accessor", []string{sdk.CapabilityWatch}, watch, watchAccessor{bare{}, true}, ""},
		{"denied by accessor", []string{sdk.CapabilityWatch}, watch, watchAccessor{watchingBackend{}, false}, "does not implement"},
	}
	for _, c := range cases {
		s := &suite{h: Harness{Declared: c.declared}}
		got := s.mismatch(c.c, c.v)
		if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: mismatch = %q; want one saying %q", c.name, got, c.want)
		}
	}
	if _, ok := capabilityNamed(capSalvage); ok {
		t.Error("salvage is declarable; no sdk.Info names it")
	}
	if _, ok := capabilityNamed("select-range"); ok {
		t.Error(`"select-range" (a summarizer's) is taken for a persistence capability`)
	}
}
