package session

import (
	"maps"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Replacement records one committed replace (docs/format.md).
type Replacement struct {
	Seq      sdk.Seq   // the replacing event
	StartSeq sdk.Seq   // surfaceOp.startSeq
	EndSeq   sdk.Seq   // surfaceOp.endSeq
	Shadowed []sdk.Seq // the nodes it shadowed, in surface order
}

// TranscriptEntry is one append-origin surface event with the message it
// records (projections not applied; empty messages included).
type TranscriptEntry struct {
	Seq     sdk.Seq
	Type    string
	Message MessageView
}

// folds holds the incremental folds other than the surface.
type folds struct {
	header    *record // last request/header
	context   *record // last request/context
	inherited int64   // seq of the last {inherited: true} marker; -1 when none
	// firstHeader is the seq of the first request/header; -1 when none
	// (a replayed operation's header is checked as of its first seq).
	firstHeader int64
	tools       toolFold
}

func (f *folds) init() { f.inherited, f.firstHeader = -1, -1 }

// commit applies a validated plan (step A12, and each restore step). Called
// by the appender with stateMu held; it never fails.
func (s *Session) commit(r *record, pl plan) {
	s.records = append(s.records, r)
	s.surf.grow(r.seq)
	switch pl.kind {
	case planAppend:
		s.surf.pushBack(r.seq)
		if s.flatValid {
			s.flat = append(s.flat, r.seq)
		}
	case planReplace:
		s.surf.replace(r.seq, pl.shadowed)
		s.flatValid = false
		s.flat = nil
		op := r.meta.op
		s.replacements = append(s.replacements, Replacement{Seq: r.seq, StartSeq: op.StartSeq, EndSeq: op.EndSeq, Shadowed: pl.shadowed})
		s.replaceGen++
		s.contentGen++
	case planProject:
		if s.projected == nil {
			s.projected = make(map[sdk.Seq]*msgRec)
		}
		for _, m := range pl.project {
			s.projected[m.seq] = m
		}
		if s.usedProj[pl.projType] != pl.projID {
			used := maps.Clone(s.usedProj) // copy on write: published maps are never changed
			if used == nil {
				used = make(map[string]string)
			}
			used[pl.projType] = pl.projID
			s.usedProj = used
		}
		s.contentGen++
	}
	if r.cls == classS && pl.kind == planAppend && r.msg != nil {
		s.transcript = append(s.transcript, TranscriptEntry{Seq: r.seq, Type: r.typ, Message: MessageView{r.msg}})
	}
	switch r.typ {
	case TypeRequestHeader:
		if s.folds.firstHeader < 0 {
			s.folds.firstHeader = int64(r.seq)
		}
		s.folds.header = r
		s.folds.tools.header(r)
	case TypeRequestContext:
		s.folds.context = r
	case TypeDeveloperMessage:
		s.folds.tools.developer(r, func(seq int64) *record {
			if seq < int64(s.surf.base) || seq >= int64(r.seq) {
				return nil
			}
			return s.recordAt(sdk.Seq(seq))
		})
	case TypeSessionEndSeed:
		if b, _ := r.dataView().Get("inherited").Bool(); b {
			s.folds.inherited = int64(r.seq)
		}
	}
	if r.flags&flagOperation != 0 {
		s.holdOperation(r)
	}
	r.settle()
}
