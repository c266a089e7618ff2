package session

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// A checkpoint (docs/storage.md, "Checkpoints") is what the restore of
// events [0, K) derived from each event — its type, class, flags, the spans
// of its data and message, its surface operation and sources — so that a
// later restore of the same K stored envelopes can accept them as validated
// and only fold them. The fold itself (surface, transcript, header fold,
// tool history, lineage marker) is rebuilt from those facts, which is
// cheap; what the checkpoint saves is parsing and checking every event.
//
// The backend binds a checkpoint to the exact stored bytes of the prefix
// (sdk.Checkpointer); the host checks that the checkpoint was made by a
// build and configuration that validate exactly as it does (version and
// fingerprint) and that every envelope it covers has the recorded length
// and seq. A checkpoint that fails any of these is ignored.

// checkpointVersion changes whenever a rule of the restore pipeline or the
// encoding below changes: a checkpoint of another version is ignored.
const checkpointVersion = 2

// checkpointMagic starts every encoded checkpoint.
const checkpointMagic = "LBCK"

// Checkpoint flags, one byte per event.
const (
	ckIgnorable = 1 << iota
	ckYields
	ckMessage
	ckOpPresent
	ckOpOK
	ckOpReplace
	ckSrcPresent
	ckSrcOK
)

// ckOperation is set in an event's class byte when its envelope opens an
// operation (docs/format.md, "Operation ids"): the restore reads it
// through the full pipeline, which indexes the id.
const ckOperation = 0x80

// errCheckpoint reports a checkpoint that does not fit the envelopes it
// is meant to cover.
var errCheckpoint = errors.New("the checkpoint does not match the stored log")

// Checkpoint encodes the session's checkpoint as of its current length
// (see above). ok is false for a session a checkpoint cannot describe: a
// window, one whose log is empty, or one that uses message projections
// (their decisions come from plugins and are made again on restore).
func (s *Session) Checkpoint() (data []byte, events sdk.Offset, ok bool) {
	p := s.pub.Load()
	if s.surf.base != 0 || len(p.records) == 0 || len(p.usedProj) > 0 {
		return nil, 0, false
	}
	var types []string
	typeIndex := map[string]int{}
	for _, r := range p.records {
		if _, seen := typeIndex[r.typ]; !seen {
			typeIndex[r.typ] = len(types)
			types = append(types, r.typ)
		}
	}
	buf := make([]byte, 0, 16+len(p.records)*12)
	buf = append(buf, checkpointMagic...)
	buf = binary.AppendUvarint(buf, checkpointVersion)
	buf = binary.LittleEndian.AppendUint64(buf, s.opts.fingerprint())
	buf = binary.AppendUvarint(buf, uint64(len(p.records)))
	buf = binary.AppendUvarint(buf, uint64(len(types)))
	for _, t := range types {
		buf = binary.AppendUvarint(buf, uint64(len(t)))
		buf = append(buf, t...)
	}
	var prevTime int64
	for _, r := range p.records {
		buf = binary.AppendUvarint(buf, uint64(typeIndex[r.typ]))
		cls := byte(r.cls)
		if r.flags&flagOperation != 0 {
			cls |= ckOperation
		}
		buf = append(buf, cls, r.checkpointFlags())
		buf = binary.AppendVarint(buf, r.time-prevTime)
		prevTime = r.time
		buf = binary.AppendUvarint(buf, uint64(len(r.env)))
		buf = binary.AppendUvarint(buf, uint64(r.dataStart))
		buf = binary.AppendUvarint(buf, uint64(r.dataEnd-r.dataStart))
		if r.msg != nil {
			buf = binary.AppendUvarint(buf, uint64(r.msgStart))
			buf = binary.AppendUvarint(buf, uint64(len(r.msg.json)))
		}
		if r.meta.opOK && r.meta.op.Replace {
			buf = binary.AppendUvarint(buf, uint64(r.meta.op.StartSeq))
			buf = binary.AppendUvarint(buf, uint64(r.meta.op.EndSeq))
		}
		if r.meta.srcOK {
			buf = binary.AppendUvarint(buf, uint64(len(r.meta.sources)))
			for _, src := range r.meta.sources {
				buf = binary.AppendUvarint(buf, uint64(src))
			}
		}
	}
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
	return buf, sdk.Offset(len(p.records)), true
}

// castagnoli is the CRC-32C table: the checkpoint ends in the checksum of
// everything before it, so that no damaged checkpoint is trusted.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (r *record) checkpointFlags() byte {
	var f byte
	set := func(bit byte, on bool) {
		if on {
			f |= bit
		}
	}
	set(ckIgnorable, r.ignorable)
	set(ckYields, r.yields)
	set(ckMessage, r.msg != nil)
	set(ckOpPresent, r.meta.opPresent)
	set(ckOpOK, r.meta.opOK)
	set(ckOpReplace, r.meta.op.Replace)
	set(ckSrcPresent, r.meta.srcPresent)
	set(ckSrcOK, r.meta.srcOK)
	return f
}

// fingerprint digests what decides how a restore classifies and checks
// events besides the build: the event size limit, the format version and
// the loaded plugins' declarations.
func (o Options) fingerprint() uint64 {
	h := fnv.New64a()
	h.Write(strconv.AppendInt(nil, int64(o.MaxEventBytes), 10))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, sdk.FormatVersion, 10))
	for _, t := range slices.Sorted(maps.Keys(o.PluginTypes)) {
		h.Write([]byte{1})
		h.Write([]byte(t))
		h.Write([]byte(strconv.FormatBool(o.PluginTypes[t])))
	}
	for _, p := range slices.Sorted(maps.Keys(o.Plugins)) {
		h.Write([]byte{2})
		h.Write([]byte(p))
	}
	return h.Sum64()
}

// A DecodedCheckpoint is a checkpoint checked against the options of the
// session it is to restore, ready for Restorer.UseCheckpoint.
type DecodedCheckpoint struct {
	events int
	types  []string
	rest   []byte // the per-event entries not consumed yet
	time   int64
	// recs and msgs are what the next entries' records and messages are
	// taken from: allocated recordSlab at a time, since a restore keeps
	// every record for the session's life.
	recs []record
	msgs []msgRec
}

// recordSlab is how many records (and messages) one allocation of a
// checkpoint restore holds.
const recordSlab = 512

// fromSlab returns a zero element of *slab, which it refills with
// recordSlab new elements when empty.
func fromSlab[T any](slab *[]T) *T {
	if len(*slab) == 0 {
		*slab = make([]T, recordSlab)
	}
	e := &(*slab)[0]
	*slab = (*slab)[1:]
	return e
}

// Events returns the number of events the checkpoint covers.
func (c *DecodedCheckpoint) Events() sdk.Offset { return sdk.Offset(c.events) }

// DecodeCheckpoint reads an encoded checkpoint for a session restored with
// opts. It fails when the checkpoint is of another version, was made under
// other options (see Options), or is not well formed; the caller then
// restores without it.
func DecodeCheckpoint(data []byte, opts Options) (*DecodedCheckpoint, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	bad := func(what string) error {
		return sdk.Errorf(sdk.CodeCorruptLog, "checkpoint", "the checkpoint is unusable: %s", what)
	}
	if len(data) < len(checkpointMagic)+4 || string(data[:len(checkpointMagic)]) != checkpointMagic {
		return nil, bad("it does not start with " + strconv.Quote(checkpointMagic))
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return nil, bad("its checksum does not match")
	}
	d := body[len(checkpointMagic):]
	v, n := binary.Uvarint(d)
	if n <= 0 || v != checkpointVersion {
		return nil, bad("version " + strconv.FormatUint(v, 10) + ", this build reads " + strconv.Itoa(checkpointVersion))
	}
	d = d[n:]
	if len(d) < 8 || binary.LittleEndian.Uint64(d) != o.fingerprint() {
		return nil, bad("it was made under other limits or plugins")
	}
	d = d[8:]
	c := &DecodedCheckpoint{}
	events, n := binary.Uvarint(d)
	if n <= 0 || events > uint64(len(d)) { // each event takes at least one byte
		return nil, bad("bad event count")
	}
	d = d[n:]
	c.events = int(events)
	ntypes, n := binary.Uvarint(d)
	if n <= 0 || ntypes > uint64(len(d)) {
		return nil, bad("bad type table")
	}
	d = d[n:]
	for range ntypes {
		l, n := binary.Uvarint(d)
		if n <= 0 || l > uint64(len(d)-n) {
			return nil, bad("bad type table")
		}
		c.types = append(c.types, string(d[n:n+int(l)]))
		d = d[n+int(l):]
	}
	c.rest = d
	return c, nil
}

// entry decodes the next event's facts into a record over env, the event's
// stored envelope at seq; errCheckpoint when they do not fit it.
func (c *DecodedCheckpoint) entry(env []byte, seq sdk.Seq) (*record, error) {
	d := c.rest
	next := func() uint64 {
		v, n := binary.Uvarint(d)
		if n <= 0 {
			d = nil
			return 0
		}
		d = d[n:]
		return v
	}
	ti := next()
	if len(d) < 2 || ti >= uint64(len(c.types)) {
		return nil, errCheckpoint
	}
	cls, flags, opens := class(d[0]&^ckOperation), d[1], d[0]&ckOperation != 0
	d = d[2:]
	dt, n := binary.Varint(d)
	if n <= 0 {
		return nil, errCheckpoint
	}
	d = d[n:]
	c.time += dt
	envLen, dataStart, dataLen := next(), next(), next()
	if envLen != uint64(len(env)) || dataStart+dataLen > envLen || !seqPrefix(env, seq) {
		return nil, errCheckpoint
	}
	r := fromSlab(&c.recs)
	*r = record{env: env[:len(env):len(env)], seq: seq, time: c.time, typ: c.types[ti], cls: cls,
		dataStart: uint32(dataStart), dataEnd: uint32(dataStart + dataLen),
		ignorable: flags&ckIgnorable != 0, yields: flags&ckYields != 0}
	r.meta = surfaceMeta{opPresent: flags&ckOpPresent != 0, opOK: flags&ckOpOK != 0, srcPresent: flags&ckSrcPresent != 0, srcOK: flags&ckSrcOK != 0}
	if core, ok := coreClass(r.typ); ok && core == classS {
		r.meta.opCanonical = true
	}
	if flags&ckMessage != 0 {
		start, l := next(), next()
		if start+l > envLen {
			return nil, errCheckpoint
		}
		r.msg, r.msgStart = fromSlab(&c.msgs), uint32(start)
		*r.msg = msgRec{seq: seq, typ: r.typ, json: env[start : start+l : start+l]}
	}
	if opens {
		r.flags |= flagOperation
	}
	if flags&ckOpReplace != 0 {
		r.meta.op = SurfaceOp{Replace: true, StartSeq: sdk.Seq(next()), EndSeq: sdk.Seq(next())}
	}
	if r.meta.srcOK {
		k := next()
		if k > uint64(len(d)) {
			return nil, errCheckpoint
		}
		r.meta.sources = make([]sdk.Seq, k)
		for i := range r.meta.sources {
			r.meta.sources[i] = sdk.Seq(next())
		}
	}
	if d == nil {
		return nil, errCheckpoint
	}
	c.rest = d
	return r, nil
}

// seqPrefix reports whether env starts with the canonical seq member of
// seq.
func seqPrefix(env []byte, seq sdk.Seq) bool {
	const lead = `{"seq":`
	if len(env) < len(lead) || string(env[:len(lead)]) != lead {
		return false
	}
	var digits [20]byte
	num := strconv.AppendInt(digits[:0], int64(seq), 10)
	rest := env[len(lead):]
	return len(rest) > len(num) && string(rest[:len(num)]) == string(num) && rest[len(num)] == ','
}

// UseCheckpoint makes the restore accept the first c.Events() envelopes it
// is given (through Add) as validated, folding them from the checkpoint's
// facts (see above); it must be called before the first Add. An envelope
// that does not fit the checkpoint fails the Add; a restore with a
// checkpoint that fails is to be run again without one, since the
// checkpoint, not the log, may be what is wrong.
func (r *Restorer) UseCheckpoint(c *DecodedCheckpoint) { r.ck = c }

// trusted folds the envelope at the restore's next seq from the
// checkpoint. The events whose fold reads their data again (the request
// header and context, developer messages, lineage markers) and
// replacements, whose shadowed nodes the surface rules compute, go
// through the full pipeline instead.
func (r *Restorer) trusted(b []byte) error {
	s := r.s
	seq := s.nextSeq()
	rec, err := r.ck.entry(b, seq)
	if err != nil {
		return err
	}
	var pl plan
	switch {
	case rec.typ == TypeRequestHeader || rec.typ == TypeRequestContext || rec.typ == TypeDeveloperMessage ||
		rec.typ == TypeSessionEndSeed || rec.cls == classJ || rec.meta.op.Replace || rec.flags&flagOperation != 0:
		full, err := parseEnvelope(b, s.opts.MaxEventBytes)
		if err != nil {
			return err
		}
		return s.restoreOne(r.ctx, full, seq, true)
	case rec.cls == classU:
		pl.kind = planOpaque
	case rec.cls == classS:
		if !rec.meta.opOK {
			return errCheckpoint
		}
		pl.kind = planAppend
	default:
		pl.kind = planNone
	}
	s.stateMu.Lock()
	s.commit(rec, pl)
	s.stateMu.Unlock()
	return nil
}
