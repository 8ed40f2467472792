package eval

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Split is one part of a data set split by question: train (fit weights),
// validation (choose settings) or test (report; never used to choose).
type Split string

// The three parts of SplitOf.
const (
	SplitTrain      Split = "train"
	SplitValidation Split = "validation"
	SplitTest       Split = "test"
)

// Shares of SplitOf: 60 % train, 20 % validation, 20 % test.
const (
	TrainShare      = 0.6
	ValidationShare = 0.2
)

// SplitOf assigns a question to a part by a seeded hash of its id alone, so
// a question keeps its part whatever else a file holds and in whatever
// order: u = the first 8 bytes (big-endian) of SHA-256 of (seed as 8
// little-endian bytes, then the id), read as a fraction of 2^64; u < 0.6 is
// train, u < 0.8 validation, the rest test.
func SplitOf(id string, seed uint64) Split {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(id))
	u := float64(binary.BigEndian.Uint64(h.Sum(nil))>>11) / (1 << 53)
	switch {
	case u < TrainShare:
		return SplitTrain
	case u < TrainShare+ValidationShare:
		return SplitValidation
	}
	return SplitTest
}

// ParseSplit reads train, validation (or val) or test.
func ParseSplit(s string) (Split, error) {
	switch s {
	case "train":
		return SplitTrain, nil
	case "validation", "val":
		return SplitValidation, nil
	case "test":
		return SplitTest, nil
	}
	return "", fmt.Errorf("split %q: want train, validation or test", s)
}

// FilterSplit keeps the records of one part (SplitOf with seed), in order.
func FilterSplit(recs []Record, part Split, seed uint64) []Record {
	var out []Record
	for _, r := range recs {
		if SplitOf(r.ID, seed) == part {
			out = append(out, r)
		}
	}
	return out
}
