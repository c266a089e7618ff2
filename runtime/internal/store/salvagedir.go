package store

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
)

// The salvage directory (Options.SalvageDir, docs/storage.md):
//
//	<name(child, ms)>   an artifact: the damaged bytes a salvage left out
//	.salvage.lock       flock(2) held by a salvage from start to end, in every process
//	.salvage.intent     the salvage under way: {"child": id, "artifact": name}
//	.salvage.pending    its artifact's bytes, until the child is stored
//
// name(child, ms) is url.PathEscape(child) + "-<ms>.salvaged.bin",
// shortened by durable.FitName when it would pass sdk.MaxFileNameBytes.
//
// A salvage makes two things, the child session and its artifact, and a
// kill may stop it anywhere. So, holding the lock, it first finishes the
// salvage a kill interrupted (recoverSalvage), then writes the intent and
// the pending bytes (each durably), creates the child and flushes it, and
// only then links the pending bytes to the artifact's name; last it removes
// the pending name and the intent. The recovery links the pending bytes
// when the child of the intent is stored, and removes them when it is not:
// after it, every artifact has its child and every salvaged child its
// artifact. The hidden names never count as artifacts.
const (
	salvageLockName    = ".salvage.lock"
	salvageIntentName  = ".salvage.intent"
	salvagePendingName = ".salvage.pending"
	salvageSuffix      = ".salvaged.bin"
)

// salvageLockRetry is the pause between tries of the salvage lock while
// another salvage holds it.
const salvageLockRetry = 10 * time.Millisecond

// salvageArtifactName is the file name of the artifact of a salvage that
// made child at epoch ms.
func salvageArtifactName(child string, ms int64) string {
	return durable.FitName(url.PathEscape(child), "-"+strconv.FormatInt(ms, 10)+salvageSuffix)
}

// isSalvageArtifactOf reports whether name is salvageArtifactName(id, ms)
// for some epoch ms.
func isSalvageArtifactOf(name, id string) bool {
	rest, ok := strings.CutSuffix(name, salvageSuffix)
	dash := strings.LastIndexByte(rest, '-')
	if !ok || dash < 0 {
		return false
	}
	ms, err := strconv.ParseInt(rest[dash+1:], 10, 64)
	return err == nil && ms >= 0 && name == salvageArtifactName(id, ms)
}

// salvageIntent is what .salvage.intent holds.
type salvageIntent struct {
	Child    string `json:"child"`
	Artifact string `json:"artifact"` // a base name in the salvage directory
}

// lockSalvageDir creates dir (0700) when missing and takes its salvage
// lock, waiting while another salvage holds it until ctx ends. unlock
// releases it.
func lockSalvageDir(ctx context.Context, dir string) (unlock func(), err error) {
	if err := durable.MkdirAll(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, salvageLockName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // the close drops the flock
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(salvageLockRetry):
		}
	}
}

// recoverSalvage finishes or annuls, with the salvage lock of dir held,
// what a salvage that was killed left in dir: with the intent's child
// stored (or live here, and then flushed), its pending bytes are linked to
// the artifact's name; then the pending bytes, the intent and every
// temporary file of a durable write are removed. A child whose state
// cannot be told (its backend fails) leaves everything as it is and fails.
func (st *Store) recoverSalvage(ctx context.Context, p Backend, dir string) error {
	intentPath, pending := filepath.Join(dir, salvageIntentName), filepath.Join(dir, salvagePendingName)
	raw, err := os.ReadFile(intentPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var in salvageIntent
	if err == nil && json.Unmarshal(raw, &in) == nil && sdk.ValidateSessionID(in.Child) == nil && isSalvageArtifactName(in.Artifact) {
		if s, live := st.Get(in.Child); live {
			if _, err := st.Flush(ctx, s); err != nil {
				return err
			}
		}
		_, err := p.Persistence.Stat(ctx, in.Child)
		switch {
		case err == nil || errors.Is(err, sdk.CodeCorruptLog):
			if err := os.Link(pending, filepath.Join(dir, in.Artifact)); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if err := durable.SyncDir(dir); err != nil {
				return err
			}
		case !errors.Is(err, sdk.CodeSessionNotFound):
			return err
		}
	}
	return removeSalvageLeftovers(dir)
}

// isSalvageArtifactName reports whether name is a plain artifact name of
// the salvage directory (what an intent may name).
func isSalvageArtifactName(name string) bool {
	return strings.HasSuffix(name, salvageSuffix) && name == filepath.Base(name) && name != "." && name != ".." && !strings.HasPrefix(name, ".salvage.")
}

// removeSalvageLeftovers removes from dir what a salvage leaves only while
// it runs: the pending bytes, then the intent (once an artifact has its
// name, the pending one is a second name of it), then the temporary files
// of durable writes; and syncs dir when it removed any. It touches only
// what is there.
func removeSalvageLeftovers(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		switch n := e.Name(); {
		case n == salvagePendingName:
			names = append([]string{n}, names...)
		case n == salvageIntentName, durable.IsTemp(n):
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	for _, n := range names {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return durable.SyncDir(dir)
}
