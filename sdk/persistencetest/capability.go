package persistencetest

import "github.com/seed-e5e476df/logbook/sdk"

// capability returns p's optional capability T. A backend reached through
// a host's plugin proxy implements none of the capability interfaces and
// reports each by an accessor named after it, such as
// Watcher() (sdk.Watcher, bool), by what the plugin declared; get is that
// accessor's method expression. Any other backend has T when its type
// implements it.
func capability[T, A any](p sdk.Persistence, get func(A) (T, bool)) (T, bool) {
	if a, ok := p.(A); ok {
		return get(a)
	}
	t, ok := p.(T)
	return t, ok
}

// The accessors of a plugin proxy, one per capability.
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
	deleterAccessor interface{ Deleter() (sdk.Deleter, bool) }
)
