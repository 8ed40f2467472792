package cache

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math"
	"slices"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	k := key(sha256.Sum256([]byte("hello")))
	vec := []float32{0, -1.5, 3.25, math.MaxFloat32, math.SmallestNonzeroFloat32}
	b := appendRecord([]byte("prefix"), k, vec)[len("prefix"):]
	if len(b) != recordSize(len(vec)) {
		t.Fatalf("record is %d bytes, want %d", len(b), recordSize(len(vec)))
	}
	gk, gv, n, err := decodeRecord(append(b, "trailing"...), nil)
	if err != nil || gk != k || !slices.Equal(gv, vec) || n != len(b) {
		t.Fatalf("decode = %x %v %d %v", gk, gv, n, err)
	}
	for cut := range len(b) {
		if _, _, _, err := decodeRecord(b[:cut], nil); !errors.Is(err, errShort) && cut >= recHeadSize {
			t.Fatalf("cut %d: %v, want errShort", cut, err)
		} else if err == nil {
			t.Fatalf("cut %d decoded", cut)
		}
	}
	for i := range b {
		c := slices.Clone(b)
		c[i] ^= 0x80
		if _, _, _, err := decodeRecord(c, nil); err == nil {
			t.Fatalf("bit flip at %d not detected", i)
		}
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, n := range []ns{{kindPassage, ""}, {kindQuery, "openai:base=api.openai.com&model=x"}} {
		b := encodeHeader(n)
		got, size, err := decodeHeader(b)
		if err != nil || got != n || size != len(b) {
			t.Fatalf("%v: %v %d %v", n, got, size, err)
		}
		rn, rs, err := readHeader(bytes.NewReader(b), int64(len(b)))
		if err != nil || rn != n || rs != int64(len(b)) {
			t.Fatalf("readHeader: %v %d %v", rn, rs, err)
		}
	}
	if (ns{kindPassage, "a"}).fileName() == (ns{kindQuery, "a"}).fileName() {
		t.Fatal("passage and query files collide")
	}
}

func TestScanStopsAtTornTail(t *testing.T) {
	var b []byte
	var want [][]float32
	for i := range 3 {
		v := []float32{float32(i), 1, 2}
		want = append(want, v)
		b = appendRecord(b, key{byte(i)}, v)
	}
	whole := len(b)
	b = append(b, appendRecord(nil, key{9}, []float32{7, 7, 7})[:20]...)
	var got [][]float32
	dim := 0
	end, err := scanRecords(bytes.NewReader(b), "mem", 0, int64(len(b)), &dim,
		func(_ key, v []float32) { got = append(got, slices.Clone(v)) })
	if err != nil || end != int64(whole) || dim != 3 || len(got) != 3 {
		t.Fatalf("end %d (want %d) dim %d records %d err %v", end, whole, dim, len(got), err)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("record %d = %v", i, got[i])
		}
	}
}

// FuzzDecode feeds arbitrary bytes to the record decoder, the header decoder
// and the file scanner: none may panic, and whatever decodes must re-encode
// to the same bytes.
func FuzzDecode(f *testing.F) {
	rec := appendRecord(nil, key{1, 2, 3}, []float32{0.5, -0.25, 8})
	hdr := encodeHeader(ns{kindPassage, "m"})
	f.Add(rec)
	f.Add(append(slices.Clone(hdr), rec...))
	f.Add(append(append(slices.Clone(rec), 0, 0, 0), rec...))
	f.Add(rec[:10])
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xD3, 0xA5, 0xE1, 0xC7}, 20))
	f.Fuzz(func(t *testing.T, b []byte) {
		if k, v, n, err := decodeRecord(b, nil); err == nil {
			if !bytes.Equal(appendRecord(nil, k, v), b[:n]) {
				t.Fatal("decoded record does not re-encode to its bytes")
			}
		}
		if n, size, err := decodeHeader(b); err == nil {
			if !bytes.Equal(encodeHeader(n), b[:size]) {
				t.Fatal("decoded header does not re-encode to its bytes")
			}
		}
		_, _, _ = readHeader(bytes.NewReader(b), int64(len(b)))
		dim := 0
		r := bytes.NewReader(b)
		end, err := scanRecords(r, "fuzz", 0, int64(len(b)), &dim, func(k key, v []float32) {
			if len(v) != dim {
				t.Fatalf("record of dimension %d in a file of dimension %d", len(v), dim)
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatal("non-finite value passed through")
				}
			}
		})
		if end < 0 || end > int64(len(b)) {
			t.Fatalf("end %d outside [0, %d]", end, len(b))
		}
		var ce *CorruptError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if err == nil && end < int64(len(b)) {
			if _, found, _ := findRecord(r, end+1, int64(len(b))); found {
				t.Fatal("tail declared torn although an intact record follows")
			}
		}
	})
}
