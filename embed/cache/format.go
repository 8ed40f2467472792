package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"

	"github.com/ctxsel/ctxsel/internal/recordlog"
)

// On-disk format: one internal/recordlog file per namespace, in the
// layout the cache has always had (files written before it moved onto
// recordlog are read and appended to as they are). Integers little-endian.
//
//	file   = header record*
//	header = "ctxselV1" kind:u8 idLen:u32 id:[idLen]byte crc:u32
//	record = magic:u32 key:[32]byte dim:u32 vec:[dim]f32 crc:u32
//
// kind is 'P' (passages, Embed) or 'Q' (queries, EmbedQuery); id is the
// embedder's ModelID; key is sha256 of the text; each crc is CRC-32C
// (Castagnoli) over every preceding byte of its header or record. To
// recordlog the magic and kind are the header's magic, and a record's
// length counts 4-byte components.
const (
	fileMagic = "ctxselV1"
	recMagic  = 0xC7E1A5D3
	maxDim    = 1 << 16

	kindPassage byte = 'P'
	kindQuery   byte = 'Q'

	fileExt = ".log"
)

// kinds and formats are the two kinds of file, in the same order.
var (
	kinds   = []byte{kindPassage, kindQuery}
	formats = []recordlog.Format{formatOf(kindPassage), formatOf(kindQuery)}
)

func formatOf(kind byte) recordlog.Format {
	return recordlog.Format{Magic: fileMagic + string(kind), RecordMagic: recMagic, LenUnit: 4}
}

type key = recordlog.Key

// ns names one cache namespace: a model, and whether its vectors embed
// passages or queries.
type ns struct {
	kind byte
	id   string
}

// fileName is the namespace's log file name: a hash of kind and ModelID.
func (n ns) fileName() string {
	h := sha256.New()
	h.Write([]byte{n.kind, 0})
	h.Write([]byte(n.id))
	return hex.EncodeToString(h.Sum(nil)[:16]) + fileExt
}

// encodeVector is a record's payload: the components as little-endian
// float32.
func encodeVector(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// validVector reports whether a payload is a vector: not empty, whole
// components, at most maxDim of them, each finite.
func validVector(p []byte) bool {
	if len(p) == 0 || len(p)%4 != 0 || len(p)/4 > maxDim {
		return false
	}
	for i := 0; i < len(p); i += 4 {
		if binary.LittleEndian.Uint32(p[i:])&0x7f800000 == 0x7f800000 { // exponent all ones: Inf or NaN
			return false
		}
	}
	return true
}

// decodeVector decodes a valid payload into dst[:0].
func decodeVector(p []byte, dst []float32) []float32 {
	v := dst[:0]
	for i := 0; i < len(p); i += 4 {
		v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(p[i:])))
	}
	return v
}

// ErrCorrupt is matched by every *CorruptError.
var ErrCorrupt = recordlog.ErrCorrupt

// CorruptError reports damage inside a cache file: a bad record (or header)
// followed by intact records, so it cannot be a torn tail left by a crash.
// It matches ErrCorrupt with errors.Is.
type CorruptError = recordlog.CorruptError
