package jsonv

// Buffer returns the buffer the Doc was parsed into: for Parse, exactly the
// canonical encoding of the root; for AppendParse, the caller's prefix too.
// Spans (Value.Span) are offsets into it. It is shared, not copied: callers
// must never write to it.
func (d *Doc) Buffer() []byte { return d.buf[:len(d.buf):len(d.buf)] }
