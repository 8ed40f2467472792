package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
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

// SplitShare partitions records by question: a seeded permutation of the
// records in file order puts round(frac·n) of them in train, the rest in
// test. Both keep file order.
func SplitShare(recs []Record, frac float64, seed uint64) (train, test []Record) {
	perm := rand.New(rand.NewPCG(seed, 0x5b17)).Perm(len(recs))
	nTrain := int(frac*float64(len(recs)) + 0.5)
	in := make([]bool, len(recs))
	for _, i := range perm[:nTrain] {
		in[i] = true
	}
	for i, r := range recs {
		if in[i] {
			train = append(train, r)
		} else {
			test = append(test, r)
		}
	}
	return train, test
}

// IDs returns the records' ids as a set.
func IDs(recs []Record) map[string]bool {
	m := make(map[string]bool, len(recs))
	for _, r := range recs {
		m[r.ID] = true
	}
	return m
}

// Filter keeps the records whose id is in ids, in order.
func Filter(recs []Record, ids map[string]bool) []Record {
	var out []Record
	for _, r := range recs {
		if ids[r.ID] {
			out = append(out, r)
		}
	}
	return out
}
