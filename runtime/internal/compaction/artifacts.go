package compaction

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
)

// RetrievalHint tells the model how to read a saved artifact (docs/compaction.md).
const RetrievalHint = "Read it in ranges with offset/limit, or search it with grep."

// defaultArtifactName is the file name used when the suggested one has no
// allowed byte.
const defaultArtifactName = "output.txt"

// maxArtifactName caps the safe name in bytes.
const maxArtifactName = 64

// ArtifactOwner is the session an artifact is saved for.
type ArtifactOwner struct {
	SessionID string
}

// ArtifactSource is the tool call whose output an artifact holds.
type ArtifactSource struct {
	ToolName string
	CallID   string
}

// Artifact is a saved output.
type Artifact struct {
	// Locator is where the output was saved: for LocalStore, the file's
	// absolute path.
	Locator string
	// Bytes is the saved size.
	Bytes int64
	// RetrievalHint tells the model how to read it.
	RetrievalHint string
}

// LocalStore is the local artifact store of docs/compaction.md. Artifacts live at
// <root>/session-<sha256 hex of the session id>/<16 random hex>-<safeName>,
// directories 0700 and files 0600, each file created exclusively and never
// overwritten. Artifacts are never copied or deleted by logbook: a fork's
// events carry the parent's locators and share its files. Safe for
// concurrent use.
type LocalStore struct {
	root string // absolute
}

// NewLocalStore returns a store under root, made absolute against the
// working directory. Directories are created on the first Save.
func NewLocalStore(root string) (*LocalStore, error) {
	if root == "" {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "spill", "the artifact store needs a root directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, &sdk.Error{Code: sdk.CodeConfigInvalid, Op: "spill", Detail: "artifact root " + root + " cannot be made absolute", Err: err}
	}
	return &LocalStore{root: abs}, nil
}

// Save writes data to a new file for owner's session and returns its
// absolute path as the locator, with RetrievalHint. The file name is 16
// random hex digits, "-", and suggestedName reduced to [A-Za-z0-9._-] and
// cut to 64 bytes ("output.txt" when nothing is left). The file is fsynced,
// then its directory. Failures return IO_ERROR naming the path and the tool
// call, and leave no file behind; a done ctx returns ctx.Err() before any
// write.
func (s *LocalStore) Save(ctx context.Context, owner ArtifactOwner, source ArtifactSource, suggestedName, data string) (Artifact, error) {
	if err := ctx.Err(); err != nil {
		return Artifact{}, err
	}
	sum := sha256.Sum256([]byte(owner.SessionID))
	dir := filepath.Join(s.root, "session-"+hex.EncodeToString(sum[:]))
	var nonce [8]byte
	rand.Read(nonce[:]) // never fails (crypto/rand)
	path := filepath.Join(dir, hex.EncodeToString(nonce[:])+"-"+safeArtifactName(suggestedName))
	fail := func(what string, err error) (Artifact, error) {
		return Artifact{}, &sdk.Error{Code: sdk.CodeIOError, Op: "spill", SessionID: owner.SessionID,
			Detail: what + " " + path + " for tool " + source.ToolName + " call " + source.CallID, Err: err}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail("creating the directory of", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail("creating", err)
	}
	_, err = f.WriteString(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = durable.SyncDir(dir)
	}
	if err != nil {
		os.Remove(path) // best effort: the artifact was never handed out
		return fail("writing", err)
	}
	return Artifact{Locator: path, Bytes: int64(len(data)), RetrievalHint: RetrievalHint}, nil
}

// safeArtifactName reduces name to the bytes [A-Za-z0-9._-], at most 64 of
// them, or "output.txt" when none is left.
func safeArtifactName(name string) string {
	out := make([]byte, 0, min(len(name), maxArtifactName))
	for i := 0; i < len(name) && len(out) < maxArtifactName; i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return defaultArtifactName
	}
	return string(out)
}
