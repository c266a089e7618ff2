package service

import (
	"context"
	"io"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/sdk"
)

// ExportSource writes the source file session id was imported from back
// to w, byte for byte: its source/line records in order, each line's bytes
// and its line feed (none after a last line stored with newline false).
// The session must be an import of tool (its import/tool label) holding at
// least one source/line record, else NOT_IMPORTED. It returns the number of
// lines written. Nothing is written to the session.
func (s *Service) ExportSource(ctx context.Context, id, tool string, w io.Writer) (int, error) {
	v, _, err := s.InspectView(ctx, id)
	if err != nil {
		return 0, err
	}
	defer v.Release(ctx)
	if got := v.Header().Labels[labelTool]; got != tool {
		return 0, notImported(id, tool, "it is not an import of "+tool+" (its "+labelTool+" label is \""+got+"\")")
	}
	var buf []byte
	n := 0
	for _, ev := range v.Events() {
		if ev.Type != foreign.TypeSourceLine {
			continue
		}
		r, err := foreign.DecodeRecord(ev.Data)
		if err != nil {
			return n, err
		}
		buf = r.AppendSource(buf[:0])
		if _, err := w.Write(buf); err != nil {
			return n, sdk.Wrapf(sdk.CodeIOError, "export", err, "writing line %d of session %q", r.N, id)
		}
		n++
	}
	if n == 0 {
		return 0, notImported(id, tool, "it holds no source/line record")
	}
	return n, nil
}

func notImported(id, tool, why string) error {
	e := sdk.Errorf(sdk.CodeNotImported, "export", "session %q cannot be written back as a %s file: %s; export --format %s works on sessions made by logbook import --from %s", id, tool, why, tool, tool)
	e.SessionID = id
	return e
}
