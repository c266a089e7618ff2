package jsonl

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// findLog selects a session's log in dir (docs/storage.md, docs/format.md): the highest
// generation N of events.v<N>.jsonl[.zst]. Missing → SESSION_NOT_FOUND;
// both suffixes in that generation → CORRUPT_LOG; the other suffix than
// configured → COMPRESSION_MISMATCH. Temp files never count.
func (b *Backend) findLog(id, dir string, cfg Config) (path string, zst bool, err error) {
	if err := b.checkSessionDir(id, dir); err != nil {
		return "", false, err
	}
	names, err := b.fs.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", false, handles.NotFound(op, id)
		}
		return "", false, handles.IOError(op, id, "listing "+dir, err)
	}
	best, plain, comp := 0, false, false
	for _, n := range names {
		gen, isZst, ok := parseLogName(n)
		if !ok {
			continue
		}
		if gen > best {
			best, plain, comp = gen, false, false
		}
		if gen == best {
			if isZst {
				comp = true
			} else {
				plain = true
			}
		}
	}
	if best == 0 {
		return "", false, handles.NotFound(op, id)
	}
	want := cfg.Compression == CompressionZstd
	if plain && comp {
		e := sdk.Errorf(sdk.CodeCorruptLog, op, "%s and %s both exist; a session has one log per generation, and nothing is converted implicitly",
			filepath.Join(dir, logName(best, false)), filepath.Join(dir, logName(best, true)))
		e.SessionID = id
		return "", false, e
	}
	if comp != want {
		found := CompressionNone
		if comp {
			found = CompressionZstd
		}
		p := filepath.Join(dir, logName(best, comp))
		e := sdk.Errorf(sdk.CodeCompressionMismatch, op, "%s is stored with compression %q but the backend is configured with %q; nothing is converted implicitly: configure compression = %q for it",
			p, found, cfg.Compression, found)
		e.SessionID = id
		return "", false, e
	}
	return filepath.Join(dir, logName(best, comp)), comp, nil
}

// checkSessionDir refuses a session directory that is a symbolic link:
// the backend makes every session directory itself, inside the root, so a
// link is not its layout, and following it would read and write outside
// the root. That is CORRUPT_LOG: final, as retrying cannot change it, and
// listed as a damaged entry rather than hidden. A missing directory is
// SESSION_NOT_FOUND.
func (b *Backend) checkSessionDir(id, dir string) error {
	fi, err := b.fs.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return handles.NotFound(op, id)
	case err != nil:
		return handles.IOError(op, id, "examining "+dir, err)
	case fi.Mode&fs.ModeSymlink != 0:
		return corruptAt(id, dir, "the session directory is a symbolic link; logbook never follows one out of its root: replace the link with the directory itself (mv its target there) or remove it")
	}
	return nil
}

// logName is events.v<gen>.jsonl, plus .zst for zstd.
func logName(gen int, zst bool) string {
	n := "events.v" + strconv.Itoa(gen) + ".jsonl"
	if zst {
		n += ".zst"
	}
	return n
}

// parseLogName recognizes events.v<N>.jsonl[.zst] with N a decimal ≥ 1
// without leading zeros.
func parseLogName(name string) (gen int, zst bool, ok bool) {
	rest, ok := strings.CutPrefix(name, "events.v")
	if !ok {
		return 0, false, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 || rest[0] == '0' {
		return 0, false, false
	}
	gen, _ = strconv.Atoi(rest[:i])
	switch rest[i:] {
	case ".jsonl":
		return gen, false, true
	case ".jsonl.zst":
		return gen, true, true
	}
	return 0, false, false
}
