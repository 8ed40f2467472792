package lexical

import "strings"

// A Vocab numbers terms densely, 0, 1, 2, … in order of first appearance,
// so that an index can count and store term ids rather than hash a string
// per occurrence. AppendIDs tokenizes with the same scanners as Terms:
// Term of each id it appends gives exactly Terms(text). The zero Vocab is
// empty and ready to use; a Vocab is not safe for concurrent use.
type Vocab struct {
	slots []vocabSlot       // open addressing over terms of ≤ 8 bytes, keyed by packed bytes
	used  int               // filled slots
	shift uint              // 64 − log2(len(slots)): a hash's top bits index the slots
	long  map[string]uint32 // longer terms
	names []string
	buf   []byte
}

type vocabSlot struct {
	key uint64 // packed term (never 0 for a term), 0 when empty
	id  uint32
}

// Len is the number of distinct terms seen.
func (v *Vocab) Len() int { return len(v.names) }

// Term is the term numbered id (id < Len()).
func (v *Vocab) Term(id uint32) string { return v.names[id] }

// AppendIDs appends the ids of Terms(text), in order, to dst, numbering
// terms not seen before. It allocates only for new terms.
func (v *Vocab) AppendIDs(dst []uint32, text string) []uint32 {
	if !isASCII(text) {
		for i := 0; ; {
			a, b, low := nextWordAny(text, i, v.buf)
			if a == b {
				return dst
			}
			if low != nil {
				v.buf = low
				dst = append(dst, v.idLower(low))
			} else {
				dst = append(dst, v.id(text[a:b], false))
			}
			i = b
		}
	}
	for i := 0; ; {
		a, b, key, upper := nextWord(text, i)
		if a == b {
			return dst
		}
		if b-a <= 8 {
			if s := v.slot(key); s.key != 0 {
				dst = append(dst, s.id)
			} else {
				dst = append(dst, v.fill(s, key, ascii(text[a:b], upper)))
			}
		} else {
			dst = append(dst, v.id(text[a:b], upper))
		}
		i = b
	}
}

// ascii is an ASCII term found in the text, lower-cased when upper is
// false, as a new name: lower-cased or copied, so that names never hold on
// to the text they were found in.
func ascii(w string, upper bool) string {
	if upper {
		return strings.ToLower(w)
	}
	return strings.Clone(w)
}

// id is the id of term w as found in the text: lower-cased unless upper
// (then ASCII). A long term with upper case is looked up lower-cased in a
// reused buffer, without allocating.
func (v *Vocab) id(w string, upper bool) uint32 {
	if upper {
		v.buf = appendLower(v.buf[:0], w)
		return v.idLower(v.buf)
	}
	if len(w) <= 8 {
		key := packRaw(w)
		s := v.slot(key)
		if s.key == 0 {
			return v.fill(s, key, strings.Clone(w))
		}
		return s.id
	}
	if id, ok := v.long[w]; ok {
		return id
	}
	return v.addLong(strings.Clone(w))
}

// idLower is the id of the lower-cased term w (a buffer the caller reuses).
func (v *Vocab) idLower(w []byte) uint32 {
	if len(w) <= 8 {
		key := packRaw(w)
		s := v.slot(key)
		if s.key == 0 {
			return v.fill(s, key, string(w))
		}
		return s.id
	}
	if id, ok := v.long[string(w)]; ok {
		return id
	}
	return v.addLong(string(w))
}

// slot is the slot of the term of at most 8 bytes packed as key: the one
// holding it, or the empty one where it goes (see fill).
func (v *Vocab) slot(key uint64) *vocabSlot {
	if 2*(v.used+1) > len(v.slots) {
		v.grow()
	}
	mask := len(v.slots) - 1
	for i := int(key * fibMul >> v.shift); ; i = (i + 1) & mask {
		if s := &v.slots[i]; s.key == key || s.key == 0 {
			return s
		}
	}
}

// fill numbers the new term name in the empty slot s.
func (v *Vocab) fill(s *vocabSlot, key uint64, name string) uint32 {
	v.names = append(v.names, name)
	s.key, s.id = key, uint32(len(v.names)-1)
	v.used++
	return s.id
}

// addLong numbers the new term name of more than 8 bytes.
func (v *Vocab) addLong(name string) uint32 {
	if v.long == nil {
		v.long = map[string]uint32{}
	}
	v.names = append(v.names, name)
	id := uint32(len(v.names) - 1)
	v.long[name] = id
	return id
}

const fibMul = 0x9e3779b97f4a7c15 // 2⁶⁴/φ: spreads packed bytes over the top bits

// grow doubles the slot table (at least 1024 slots), keeping it at most
// half full.
func (v *Vocab) grow() {
	old := v.slots
	n := max(1024, 2*len(old))
	v.slots = make([]vocabSlot, n)
	v.shift = 64
	for ; n > 1; n >>= 1 {
		v.shift--
	}
	mask := len(v.slots) - 1
	for _, s := range old {
		if s.key == 0 {
			continue
		}
		i := int(s.key * fibMul >> v.shift)
		for v.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		v.slots[i] = s
	}
}

// appendLower appends ASCII w lower-cased to dst.
func appendLower(dst []byte, w string) []byte {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
