package jsonl

import (
	"path/filepath"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
)

// storeMigrated stores the migration of hd's log, open for writing with
// an older format version, as the next generation (docs/storage.md
// "Generations", docs/format.md "Format versions"): header, the migrated
// header JSON, and then events, the old log's committed event units byte
// for byte (every edge of this build keeps the envelopes), in a new
// events.v<sdk.FormatVersion> file. The new log is scanned (the new
// header, every event as the old log has it, nothing torn) before it is
// written to a temp name, whose size is checked before it is linked in;
// the old generation is never changed. A crash
// leaves either no new file (a temp the next write open removes, and the
// old log still the log, migrated again by that open) or the complete new
// one. On success hd's log is the new file and the returned bytes are its
// contents. hd.mu is held.
func (b *Backend) storeMigrated(hd *handle, header, events []byte) ([]byte, error) {
	unit, err := b.headerUnitOf(header, hd.zst)
	if err != nil {
		return nil, err
	}
	content := append(unit[:len(unit):len(unit)], events...)
	final := filepath.Join(hd.dir, logName(sdk.FormatVersion, hd.zst))
	old := hd.f
	hd.chk.scanning = true
	h, ix, err := hd.chk.scanLog(content, hd.zst, hd.id, final)
	hd.chk.endScan()
	switch {
	case err != nil:
		return nil, err
	case h.FormatVersion != sdk.FormatVersion || ix.next != hd.ix.next || ix.end != int64(len(content)):
		return nil, corruptAt(hd.id, final, "the migrated log does not scan as the old one; it is not stored")
	}
	err = b.storeLogFunc(hd, hd.chk.dec, final, func(f vfs.File) (index, error) {
		if _, err := f.WriteAt(content, 0); err != nil {
			return index{}, err
		}
		if fi, err := f.Stat(); err != nil || fi.Size != int64(len(content)) {
			return index{}, corruptAt(hd.id, final, "the migrated log was not written whole; it is not linked in")
		}
		return *ix, nil
	})
	if err != nil {
		return nil, err
	}
	old.Close()
	hd.ck = nil // bound to the old generation's file
	return content, nil
}
