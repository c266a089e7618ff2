package persistencetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// capSalvage names the salvage capability (sdk.SalvageReader), which no
// plugin declares in its Info: the host finds it by type assertion.
const capSalvage = "salvage"

// capability is one optional persistence capability: the name a plugin
// declares it by and the interface a backend implements for it.
type capability struct {
	name  string // an sdk.Capability* constant, or capSalvage
	iface string // the interface, as failures name it
	// implementedBy reports whether v has the capability (Capability).
	implementedBy func(v sdk.Persistence) bool
	// undeclared: no plugin declares it (sdk.Info has no name for it);
	// only its implementation decides whether its group runs.
	undeclared bool
}

var capabilities = []capability{
	{name: sdk.CapabilityCopyPrefix, iface: "sdk.PrefixCopier", implementedBy: is[sdk.PrefixCopier]},
	{name: sdk.CapabilityWatch, iface: "sdk.Watcher", implementedBy: is[sdk.Watcher]},
	{name: sdk.CapabilityReadFrames, iface: "sdk.FrameReader", implementedBy: is[sdk.FrameReader]},
	{name: sdk.CapabilityDelete, iface: "sdk.Deleter", implementedBy: is[sdk.Deleter]},
	{name: sdk.CapabilityImport, iface: "sdk.Importer", implementedBy: is[sdk.Importer]},
	{name: sdk.CapabilityCheckpoint, iface: "sdk.Checkpointer", implementedBy: is[sdk.Checkpointer]},
	{name: sdk.CapabilityTenants, iface: "sdk.Tenancy", implementedBy: is[sdk.Tenancy]},
	{name: capSalvage, iface: "sdk.SalvageReader", implementedBy: is[sdk.SalvageReader], undeclared: true},
}

func is[T any](v sdk.Persistence) bool {
	_, ok := Capability[T](v)
	return ok
}

func capabilityNamed(name string) (capability, bool) {
	i := slices.IndexFunc(capabilities, func(c capability) bool { return c.name == name && !c.undeclared })
	if i < 0 {
		return capability{}, false
	}
	return capabilities[i], true
}

// served is the value whose type the suite asks for the optional
// interfaces: Harness.Served, or an instance from New.
func (s *suite) served(t *testing.T) sdk.Persistence {
	t.Helper()
	if s.h.Served != nil {
		return s.h.Served
	}
	return s.backend(t)
}

// declares reports whether the harness declares the capability name.
func (s *suite) declares(name string) bool { return slices.Contains(s.h.Declared, name) }

// mismatch says how the declaration of c and the implementation by v
// disagree, or "" when they agree.
func (s *suite) mismatch(c capability, v sdk.Persistence) string {
	implemented := c.implementedBy(v)
	switch {
	case c.undeclared:
		return ""
	case implemented && !s.declares(c.name):
		return fmt.Sprintf("%T implements %s but the backend does not declare the capability %q (add it to its sdk.Info Capabilities and Harness.Declared)", v, c.iface, c.name)
	case !implemented && s.declares(c.name):
		return fmt.Sprintf("the backend declares the capability %q but %T does not implement %s", c.name, v, c.iface)
	}
	return ""
}

// checkDeclared is the Capabilities group: every capability the backend
// declares is one the suite knows and its type implements, and every one
// its type implements is declared.
func (s *suite) checkDeclared(t *testing.T) {
	v := s.served(t)
	for _, name := range s.h.Declared {
		if _, ok := capabilityNamed(name); !ok {
			t.Errorf("the backend declares %q, which is no persistence capability (sdk.Capability*)", name)
		}
	}
	for _, c := range capabilities {
		if m := s.mismatch(c, v); m != "" {
			t.Error(m)
		}
	}
}

// requireCapability fails a capability's group when the backend declares
// the capability without implementing it or implements it without
// declaring it, and skips it when it does neither.
func (s *suite) requireCapability(t *testing.T, name string) {
	t.Helper()
	i := slices.IndexFunc(capabilities, func(c capability) bool { return c.name == name })
	c := capabilities[i]
	v := s.served(t)
	if m := s.mismatch(c, v); m != "" {
		t.Fatal(m)
	}
	if !c.implementedBy(v) {
		t.Skipf("%T implements no %s, and the backend does not declare the capability %q: the rules of this group do not apply", v, c.iface, c.name)
	}
}

// implementation returns p as T, the interface of an optional capability
// whose group runs (see requireCapability), failing the test when the
// value in hand (New's, or an adapter) does not implement it.
func implementation[T any](t *testing.T, p sdk.Persistence) T {
	t.Helper()
	v, ok := Capability[T](p)
	if !ok {
		var zero *T
		t.Fatalf("%T implements no %T, though the backend declares its capability", p, zero)
	}
	return v
}

// Capability returns p's optional capability T — sdk.Watcher,
// sdk.PrefixCopier, sdk.Importer, sdk.Checkpointer, sdk.FrameReader,
// sdk.SalvageReader, sdk.Deleter or sdk.Tenancy — and whether p has it. A backend
// reached through a host's plugin proxy implements none of these
// interfaces but sdk.Tenancy; it reports each other one by an accessor named after it, such as
// Watcher() (sdk.Watcher, bool), by what the plugin declared, and that
// accessor's answer is the one returned. Any other backend has T when its
// type implements T.
func Capability[T any](p sdk.Persistence) (T, bool) {
	switch any((*T)(nil)).(type) {
	case *sdk.Watcher:
		if a, ok := p.(interface{ Watcher() (sdk.Watcher, bool) }); ok {
			return answer[T](a.Watcher())
		}
	case *sdk.PrefixCopier:
		if a, ok := p.(interface {
			PrefixCopier() (sdk.PrefixCopier, bool)
		}); ok {
			return answer[T](a.PrefixCopier())
		}
	case *sdk.Importer:
		if a, ok := p.(interface{ Importer() (sdk.Importer, bool) }); ok {
			return answer[T](a.Importer())
		}
	case *sdk.Checkpointer:
		if a, ok := p.(interface {
			Checkpointer() (sdk.Checkpointer, bool)
		}); ok {
			return answer[T](a.Checkpointer())
		}
	case *sdk.FrameReader:
		if a, ok := p.(interface {
			FrameReader() (sdk.FrameReader, bool)
		}); ok {
			return answer[T](a.FrameReader())
		}
	case *sdk.SalvageReader:
		if a, ok := p.(interface {
			SalvageReader() (sdk.SalvageReader, bool)
		}); ok {
			return answer[T](a.SalvageReader())
		}
	case *sdk.Deleter:
		if a, ok := p.(interface{ Deleter() (sdk.Deleter, bool) }); ok {
			return answer[T](a.Deleter())
		}
	}
	t, ok := p.(T)
	return t, ok
}

// answer is an accessor's answer as T.
func answer[T any](c any, has bool) (T, bool) {
	t, _ := c.(T)
	return t, has
}
