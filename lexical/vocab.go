package lexical

import "strings"

// A Vocab numbers terms densely, 0, 1, 2, … in order of first appearance,
// so that an index can count and store term ids rather than hash a string
// per occurrence. AppendIDs tokenizes with the same tokenizer as Terms:
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
// terms not seen before.
func (v *Vocab) AppendIDs(dst []uint32, text string) []uint32 {
	if !isASCII(text) {
		for _, w := range termsUnicode(text) {
			if len(w) <= 8 {
				dst = append(dst, v.short(packRaw(w), w, false))
			} else {
				dst = append(dst, v.longID(w, false))
			}
		}
		return dst
	}
	for i := 0; ; {
		a, b, key, upper := nextWord(text, i)
		if a == b {
			return dst
		}
		if b-a <= 8 {
			dst = append(dst, v.short(key, text[a:b], upper))
		} else {
			dst = append(dst, v.longID(text[a:b], upper))
		}
		i = b
	}
}

// short is the id of the term of at most 8 bytes packed as key; w is the
// term as found in the text, lower-cased when upper is false.
func (v *Vocab) short(key uint64, w string, upper bool) uint32 {
	if 2*(v.used+1) > len(v.slots) {
		v.grow()
	}
	mask := len(v.slots) - 1
	for i := int(key * fibMul >> v.shift); ; i = (i + 1) & mask {
		s := &v.slots[i]
		if s.key == key {
			return s.id
		}
		if s.key == 0 {
			s.key, s.id = key, v.add(w, upper)
			v.used++
			return s.id
		}
	}
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
	mask, sh := len(v.slots)-1, v.shift
	for _, s := range old {
		if s.key == 0 {
			continue
		}
		i := int(s.key * fibMul >> sh)
		for v.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		v.slots[i] = s
	}
}

// longID is the id of a term longer than 8 bytes, looked up without
// allocating: lower-cased into a reused buffer when it holds upper case.
func (v *Vocab) longID(w string, upper bool) uint32 {
	if v.long == nil {
		v.long = map[string]uint32{}
	}
	if upper {
		v.buf = appendLower(v.buf[:0], w)
		if id, ok := v.long[string(v.buf)]; ok {
			return id
		}
		id := v.add(string(v.buf), false)
		v.long[v.names[id]] = id
		return id
	}
	if id, ok := v.long[w]; ok {
		return id
	}
	id := v.add(w, false)
	v.long[v.names[id]] = id
	return id
}

// add numbers a new term: w lower-cased (when upper) or copied, so the
// names never hold on to the text they were found in.
func (v *Vocab) add(w string, upper bool) uint32 {
	if upper {
		w = strings.ToLower(w)
	} else {
		w = strings.Clone(w)
	}
	v.names = append(v.names, w)
	return uint32(len(v.names) - 1)
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
