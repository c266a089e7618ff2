package pi

import (
	"errors"
	"path/filepath"
	"strconv"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
)

// dialect is pi's session format.
type dialect struct{}

// New returns pi's Dialect, named "pi".
func New() foreign.Dialect { return dialect{} }

// Name is "pi".
func (dialect) Name() string { return "pi" }

// Claims reports whether text is a pi header or entry: a JSON object
// whose "type" is one pi writes (a "message" with a message object).
func (dialect) Claims(text []byte) bool {
	e, err := parse(foreign.Line{Text: text, Newline: true})
	return err == nil && e != nil
}

// Identify reads the first pi header among lines (lines of other tools
// before it are allowed). Version is the session format version ("1" when
// the header has none): pi records no program version. CWD is the header's
// cwd when it is absolute.
func (dialect) Identify(lines []foreign.Line) (foreign.Identity, error) {
	for _, l := range lines {
		e, err := parse(l)
		if err != nil || e == nil || e.Type != "session" || *e.ID == "" {
			continue
		}
		id := foreign.Identity{Tool: "pi", SessionID: *e.ID, Version: "1"}
		if e.Version != nil {
			id.Version = strconv.Itoa(*e.Version)
		}
		if filepath.IsAbs(e.CWD) {
			id.CWD = e.CWD
		}
		return id, nil
	}
	return foreign.Identity{}, errors.New(`pi: no session header (a line {"type":"session","id":…}) in the file`)
}

// NewMapper starts mapping a pi file.
func (dialect) NewMapper(foreign.Identity) foreign.Mapper { return newMapper() }
