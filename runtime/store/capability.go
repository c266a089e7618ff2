package store

import "github.com/seed-e5e476df/logbook/sdk"

// A backend's optional capabilities. An in-process backend has one when its
// type implements the capability's interface; a plugin's proxy
// (runtime/pluginhost) implements none of them and reports each through one
// accessor, such as Watcher() (sdk.Watcher, bool), by what the plugin
// declared. The store asks through the functions below, never by a type
// assertion of its own.

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
)

// capability returns p's capability T: what p's accessor A reports when p
// has one, else p itself when its type implements T.
func capability[T, A any](p sdk.Persistence, get func(A) (T, bool)) (T, bool) {
	if a, ok := p.(A); ok {
		return get(a)
	}
	t, ok := p.(T)
	return t, ok
}

func watcherOf(p sdk.Persistence) (sdk.Watcher, bool) {
	return capability(p, watcherAccessor.Watcher)
}

func prefixCopierOf(p sdk.Persistence) (sdk.PrefixCopier, bool) {
	return capability(p, prefixCopierAccessor.PrefixCopier)
}

func importerOf(p sdk.Persistence) (sdk.Importer, bool) {
	return capability(p, importerAccessor.Importer)
}

func checkpointerOf(p sdk.Persistence) (sdk.Checkpointer, bool) {
	return capability(p, checkpointerAccessor.Checkpointer)
}

func frameReaderOf(p sdk.Persistence) (sdk.FrameReader, bool) {
	return capability(p, frameReaderAccessor.FrameReader)
}

func salvageReaderOf(p sdk.Persistence) (sdk.SalvageReader, bool) {
	return capability(p, salvageReaderAccessor.SalvageReader)
}

func deleterOf(p sdk.Persistence) (sdk.Deleter, bool) {
	return capability(p, deleterAccessor.Deleter)
}
