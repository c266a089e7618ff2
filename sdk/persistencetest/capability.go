package persistencetest

import "github.com/seed-e5e476df/logbook/sdk"

// Capability returns p's optional capability T — sdk.Watcher,
// sdk.PrefixCopier, sdk.Importer, sdk.Checkpointer, sdk.FrameReader,
// sdk.SalvageReader or sdk.Deleter — and whether p has it. A backend
// reached through a host's plugin proxy implements none of these
// interfaces; it reports each by an accessor named after it, such as
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
