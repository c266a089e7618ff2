package store

import "github.com/seed-e5e476df/logbook/sdk"

// A backend's optional capabilities. An in-process backend has one when its
// type implements the capability's interface; a plugin's proxy
// (runtime/internal/pluginhost) implements none of them and reports each through one
// accessor, such as Watcher() (sdk.Watcher, bool), by what the plugin
// declared. The store asks through capability with the accessor's method,
// as in capability(p, watcherAccessor.Watcher), never by a type assertion
// of its own.

// The accessors a backend may offer, one per capability.
type (
	watcherAccessor      interface{ Watcher() (sdk.Watcher, bool) }
	prefixCopierAccessor interface {
		PrefixCopier() (sdk.PrefixCopier, bool)
	}
	importerAccessor     interface{ Importer() (sdk.Importer, bool) }
	checkpointerAccessor interface {
		Checkpointer() (sdk.Checkpointer, bool)
	}
	frameReaderAccessor interface {
		FrameReader() (sdk.FrameReader, bool)
	}
	salvageReaderAccessor interface {
		SalvageReader() (sdk.SalvageReader, bool)
	}
	deleterAccessor interface{ Deleter() (sdk.Deleter, bool) }
	tenancyAccessor interface{ Tenancy() (sdk.Tenancy, bool) }
)

// TenancyOf returns p's capability "tenants" (sdk.Tenancy), found as every
// other capability is: through a plugin proxy's accessor, else by p's own
// type. The engine builds a named tenant's store over its Tenant views.
func TenancyOf(p sdk.Persistence) (sdk.Tenancy, bool) {
	return capability(p, tenancyAccessor.Tenancy)
}

// capability returns p's capability T: what p's accessor A reports when p
// has one, else p itself when its type implements T.
func capability[T, A any](p sdk.Persistence, get func(A) (T, bool)) (T, bool) {
	if a, ok := p.(A); ok {
		return get(a)
	}
	t, ok := p.(T)
	return t, ok
}
