package jsonv

import "hash/maphash"

// smallObject is the member count up to which a new member name is checked
// against the earlier ones by a linear scan; larger objects get a hash set.
const smallObject = 32

// keySets detects duplicate member names (rule J5) while parsing. Names
// are compared by their canonical bytes, which is exact because the
// canonical string encoding is injective. Sets exist only for open objects
// past smallObject members, innermost last; the zero value is ready.
type keySets struct {
	seed   maphash.Seed
	seeded bool
	open   []keySet
	spare  [][]uint64 // slot arrays of closed objects, for reuse
}

// keySet is an open-addressing hash set of the member names of one object.
// A slot holds hash>>32 in its high half and the name's tape index + 1 in
// its low half; 0 is empty. The high half also picks the home slot, so
// growing never rehashes the names.
type keySet struct {
	obj   uint32
	used  int
	slots []uint64
}

// duplicate reports whether member name k (already counted in obj) equals
// an earlier member name of object obj.
func (s *keySets) duplicate(tape []node, out []byte, obj, k uint32) bool {
	m := tape[obj].count()
	if m > smallObject {
		return s.duplicateLarge(tape, out, obj, k, m)
	}
	kn := tape[k]
	size := kn.end - kn.start
	for j := obj + 1; j < k; j = tape[j+1].next {
		if jn := tape[j]; jn.end-jn.start == size && string(out[jn.start:jn.end]) == string(out[kn.start:kn.end]) {
			return true
		}
	}
	return false
}

// duplicateLarge is duplicate for objects past smallObject members (m).
func (s *keySets) duplicateLarge(tape []node, out []byte, obj, k uint32, m int) bool {
	if !s.seeded {
		s.seed, s.seeded = maphash.MakeSeed(), true
	}
	if m == smallObject+1 {
		// The earlier names are known distinct: insert them unchecked.
		set := keySet{obj: obj}
		if n := len(s.spare); n > 0 {
			set.slots = s.spare[n-1]
			s.spare = s.spare[:n-1]
			clear(set.slots)
		} else {
			set.slots = make([]uint64, 4*smallObject)
		}
		for j := obj + 1; j < k; j = tape[j+1].next {
			set.insert(s.hash(out, tape[j]), j, tape, out, false)
		}
		s.open = append(s.open, set)
	}
	set := &s.open[len(s.open)-1] // inner objects are closed: this is obj's
	return set.insert(s.hash(out, tape[k]), k, tape, out, true)
}

func (s *keySets) hash(out []byte, n node) uint32 {
	return uint32(maphash.Bytes(s.seed, out[n.start:n.end]) >> 32)
}

// closed drops the set of object obj, if it has one.
func (s *keySets) closed(obj uint32) {
	if n := len(s.open); n > 0 && s.open[n-1].obj == obj {
		s.spare = append(s.spare, s.open[n-1].slots)
		s.open = s.open[:n-1]
	}
}

// insert adds name k unless an equal name is present (check), in which
// case it reports true.
func (set *keySet) insert(h uint32, k uint32, tape []node, out []byte, check bool) bool {
	if 2*(set.used+1) > len(set.slots) {
		set.grow()
	}
	mask := uint32(len(set.slots) - 1)
	for pos := h & mask; ; pos = (pos + 1) & mask {
		e := set.slots[pos]
		if e == 0 {
			set.slots[pos] = uint64(h)<<32 | uint64(k+1)
			set.used++
			return false
		}
		if check && uint32(e>>32) == h {
			j := tape[uint32(e)-1]
			if string(out[j.start:j.end]) == string(out[tape[k].start:tape[k].end]) {
				return true
			}
		}
	}
}

func (set *keySet) grow() {
	old := set.slots
	set.slots = make([]uint64, 2*len(old))
	mask := uint32(len(set.slots) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		pos := uint32(e>>32) & mask
		for set.slots[pos] != 0 {
			pos = (pos + 1) & mask
		}
		set.slots[pos] = e
	}
}
