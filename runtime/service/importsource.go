package service

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/sdk"
)

// ImportSourceRequest is an import of other tools' session files
// (docs/import.md, "What every import does").
type ImportSourceRequest struct {
	// From is the tool whose files are read: a dialect's name
	// ("claude-code", "codex", "pi") or "auto", which picks, per file, the
	// dialect that claims most of its lines.
	From string
	// Paths are files and directories; directories are walked recursively.
	// Files ending in .jsonl or .jsonl.zst are read, others skipped.
	Paths []string
	// As, when set, is the id of the session the import makes instead of
	// the id the file's identity gives; it needs exactly one file, else
	// USAGE.
	As string
	// CompleteLinesOnly holds back a last line that no line feed ends yet
	// (a writer is still writing it): follow mode. Without it such a line is
	// imported as the file's last line, with newline false.
	CompleteLinesOnly bool
}

// ImportSummary is what an import did.
type ImportSummary struct {
	// Files counts the source files read (an unreadable one included).
	Files int `json:"files"`
	// Sessions are the ids of the sessions the import appended to or
	// created, in the order it first touched them: each file's session (its
	// revision when the file was rewritten) and the branch children it
	// forked.
	Sessions []string `json:"sessions"`
	// Events counts the events appended, raw records included.
	Events int64 `json:"events"`
	// DamagedLines are the lines this import stored as damaged and the
	// files it could not read (line 0), in file order.
	DamagedLines []DamagedLine `json:"damagedLines"`
}

// DamagedLine is one line an import could not read.
type DamagedLine struct {
	// File is the source file's absolute path.
	File string `json:"file"`
	// Line is the 1-based line number; 0 when the whole file could not be
	// read or holds no session of the tool.
	Line int `json:"line"`
	// Reason says why.
	Reason string `json:"reason"`
}

// dialectNames are the names --from takes besides the dialects'.
const fromAuto = "auto"

// DialectNames returns the names ImportSourceRequest.From takes: the
// registered dialects' and "auto".
func DialectNames() []string {
	var out []string
	for _, d := range builtinDialects() {
		out = append(out, d.Name())
	}
	return append(out, fromAuto)
}

// ImportSource imports r once (SourceImporter.Import), then releases every
// session it opened.
func (s *Service) ImportSource(ctx context.Context, r ImportSourceRequest) (ImportSummary, error) {
	im := s.NewSourceImporter()
	sum, err := im.Import(ctx, r)
	return sum, errors.Join(err, im.Close(ctx))
}

// SourceImporter imports source files again and again (the mirror): it
// keeps, per file, the session it writes, the dialect's mapper and how many
// of the file's lines are stored, so a file that grew costs only its new
// lines. It is safe for concurrent use; its calls run one at a time.
type SourceImporter struct {
	svc      *Service
	dialects []foreign.Dialect // builtinDialects
	mu       sync.Mutex
	files    map[string]*sourceFile // by absolute path
	now      func() time.Time
	summary  *ImportSummary // the summary of the call in progress
}

// NewSourceImporter returns an importer that holds nothing yet.
func (s *Service) NewSourceImporter() *SourceImporter {
	return &SourceImporter{svc: s, dialects: builtinDialects(), files: map[string]*sourceFile{}, now: time.Now}
}

// Import reads r.Paths and appends what is new in each file to its session
// (docs/import.md): damage is stored and reported, never an error. The
// error is a bad request (USAGE: an unknown From, As with more than one
// file) or a failure of the store, which stops the import; what was
// appended before it stays and the summary says so.
func (im *SourceImporter) Import(ctx context.Context, r ImportSourceRequest) (ImportSummary, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	sum := ImportSummary{Sessions: []string{}, DamagedLines: []DamagedLine{}}
	dialects, err := pickDialects(im.dialects, r.From)
	if err != nil {
		return sum, err
	}
	files, bad := sourceFiles(r.Paths)
	sum.DamagedLines = append(sum.DamagedLines, bad...)
	if r.As != "" {
		if len(files) != 1 {
			return sum, sdk.Errorf(sdk.CodeUsage, "import", "--as names one session, so it needs exactly one source file; %d found", len(files))
		}
		if err := sdk.ValidateSessionID(r.As); err != nil {
			return sum, err
		}
	}
	im.summary = &sum
	defer func() { im.summary = nil }()
	for _, f := range files {
		sum.Files++
		if err := im.importFile(ctx, f, dialects, r); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// ReleaseIdle releases the sessions of files not imported for idle or
// longer, and forgets those files (a later import replays their sessions).
// It returns how many sessions it released.
func (im *SourceImporter) ReleaseIdle(ctx context.Context, idle time.Duration) (released int, err error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	cut := im.now().Add(-idle)
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(im.files)) {
		if f := im.files[path]; !f.used.After(cut) {
			ok, err := im.forget(ctx, f)
			errs = append(errs, err)
			if ok {
				released++
			}
		}
	}
	return released, errors.Join(errs...)
}

// Close releases every session the importer holds.
func (im *SourceImporter) Close(ctx context.Context) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(im.files)) {
		_, err := im.forget(ctx, im.files[path])
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// forget releases f's session (unless another file still writes to it,
// or it was released under the importer) and drops f; released reports
// whether it released the session.
func (im *SourceImporter) forget(ctx context.Context, f *sourceFile) (released bool, err error) {
	delete(im.files, f.path)
	for _, o := range im.files {
		if o.sess == f.sess {
			return false, nil
		}
	}
	if f.sess == nil || f.sess.s.Closed() { // released under the importer
		return false, nil
	}
	return true, f.sess.Release(ctx)
}

// pickDialects returns the dialects From allows: the one named, or all
// of them for "auto"; anything else is USAGE naming the choices.
func pickDialects(all []foreign.Dialect, from string) ([]foreign.Dialect, error) {
	if from == fromAuto {
		if len(all) == 0 {
			return nil, sdk.Errorf(sdk.CodeUsage, "import", "--from auto: this build has no dialect")
		}
		return all, nil
	}
	for _, d := range all {
		if d.Name() == from {
			return []foreign.Dialect{d}, nil
		}
	}
	names := []string{}
	for _, d := range all {
		names = append(names, d.Name())
	}
	return nil, sdk.Errorf(sdk.CodeUsage, "import", "--from %q: must be one of %s or auto", from, strings.Join(names, ", "))
}

// sourceFiles expands paths into the absolute paths of the .jsonl and
// .jsonl.zst files they name or hold, sorted per argument, without
// duplicates; a path that cannot be read is a line-0 damage.
func sourceFiles(paths []string) (files []string, bad []DamagedLine) {
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			bad = append(bad, DamagedLine{File: p, Reason: err.Error()})
			continue
		}
		fi, err := os.Stat(abs)
		if err != nil {
			bad = append(bad, DamagedLine{File: abs, Reason: err.Error()})
			continue
		}
		if !fi.IsDir() {
			add(abs)
			continue
		}
		var found []string
		err = filepath.WalkDir(abs, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				bad = append(bad, DamagedLine{File: q, Reason: err.Error()})
				return nil
			}
			if !d.IsDir() && isSourceName(q) {
				found = append(found, q)
			}
			return nil
		})
		if err != nil {
			bad = append(bad, DamagedLine{File: abs, Reason: err.Error()})
		}
		slices.Sort(found)
		for _, q := range found {
			add(q)
		}
	}
	return files, bad
}

func isSourceName(p string) bool {
	return strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".jsonl.zst")
}

// readSource reads a source file's bytes, decompressed for .zst.
func readSource(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".zst") {
		return b, err
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	out, err := d.DecodeAll(b, nil)
	if err != nil {
		return nil, errors.New("not a readable zstd file: " + err.Error())
	}
	return out, nil
}

// detect returns the dialect of ds that claims most of lines (the first
// listed on a tie), or nil when none claims any.
func detect(ds []foreign.Dialect, lines []foreign.Line) foreign.Dialect {
	if len(ds) == 1 {
		return ds[0]
	}
	var best foreign.Dialect
	most := 0
	for _, d := range ds {
		n := 0
		for _, l := range lines {
			if d.Claims(l.Text) {
				n++
			}
		}
		if n > most {
			best, most = d, n
		}
	}
	return best
}

// damage records a damaged line in the summary of the call in progress.
func (im *SourceImporter) damage(file string, line int, reason string) {
	im.summary.DamagedLines = append(im.summary.DamagedLines, DamagedLine{File: file, Line: line, Reason: reason})
}

// touched records a session the call appended to or created.
func (im *SourceImporter) touched(id string) {
	if !slices.Contains(im.summary.Sessions, id) {
		im.summary.Sessions = append(im.summary.Sessions, id)
	}
}
