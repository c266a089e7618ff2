package session

// Accessors for the token meter of runtime/internal/compaction (docs/compaction.md), which
// keeps its own caches and needs to know, from the log alone, when the
// derived messages of existing nodes may have changed.

// ChangesContent reports whether committing e advanced its session's
// contentGeneration (docs/format.md): e is a surface replacement (a class-S event
// whose surfaceOp is a replace) or a message-projection decision (class J,
// even one that changed no message). Events of unknown types (class U) never
// do, whatever surface metadata they carry.
func (e Event) ChangesContent() bool {
	return e.r.cls == classS && e.r.meta.op.Replace || e.r.cls == classJ
}
