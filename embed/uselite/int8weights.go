package uselite

import (
	_ "embed" // the int8 weights
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// The Int8 precision's weights, quantized from the float32 model by
// quantizeColumns and bf16Columns and stored in the binary, so a process
// that embeds in int8 decodes nothing: the int8 panels are used where they
// lie. TestInt8WeightsFile checks the file against a fresh quantization
// (and rewrites it with -update-int8; see generate.go).
//
//	"USELI8\x00\x01" then, per dense matrix in denseMatrices order:
//	  int8 ones: kp·np bytes of panels, np float32 scales, np int32 corrections
//	  bf16 ones (int8AsBF16): kp·np uint16 panels
//	numbers little-endian.
//
//go:embed model_int8.bin
var int8Weights string

const int8WeightsMagic = "USELI8\x00\x01"

// int8Forms returns the Int8 forms of the dense matrices (a q8Matrix or a
// bfMatrix each) read from data, or an error when data does not hold them.
func int8Forms(w *weights, data string) (q8 []*q8Matrix, bf []*bfMatrix, err error) {
	if len(data) < len(int8WeightsMagic) || data[:len(int8WeightsMagic)] != int8WeightsMagic {
		return nil, nil, fmt.Errorf("int8 weights: bad magic")
	}
	at := len(int8WeightsMagic)
	take := func(n int) (string, error) {
		if n < 0 || at+n > len(data) {
			return "", fmt.Errorf("int8 weights: truncated")
		}
		s := data[at : at+n]
		at += n
		return s, nil
	}
	le := binary.LittleEndian
	for _, m := range w.denseMatrices() {
		np := (m.n + nr - 1) / nr * nr
		if m.int8AsBF16 {
			kp := (m.k + 1) &^ 1
			s, err := take(2 * kp * np)
			if err != nil {
				return nil, nil, err
			}
			b := &bfMatrix{k: m.k, n: m.n, kp: kp, data: make([]uint16, kp*np)}
			for i := range b.data {
				b.data[i] = le.Uint16([]byte(s[2*i : 2*i+2]))
			}
			q8, bf = append(q8, nil), append(bf, b)
			continue
		}
		kp := (m.k + 3) &^ 3
		q := &q8Matrix{k: m.k, n: m.n, kp: kp, scale: make([]float32, np), corr: make([]int32, np)}
		s, err := take(kp * np)
		if err != nil {
			return nil, nil, err
		}
		// the panels: a view of the embedded bytes (read-only data)
		q.data = unsafe.Slice((*int8)(unsafe.Pointer(unsafe.StringData(s))), len(s))
		if s, err = take(8 * np); err != nil {
			return nil, nil, err
		}
		for j := range np {
			q.scale[j] = math.Float32frombits(le.Uint32([]byte(s[4*j : 4*j+4])))
			q.corr[j] = int32(le.Uint32([]byte(s[4*np+4*j : 4*np+4*j+4])))
		}
		q8, bf = append(q8, q), append(bf, nil)
	}
	if at != len(data) {
		return nil, nil, fmt.Errorf("int8 weights: %d bytes left over", len(data)-at)
	}
	return q8, bf, nil
}

// encodeInt8Forms serialises the Int8 forms in int8Weights's layout.
func encodeInt8Forms(w *weights) []byte {
	out := []byte(int8WeightsMagic)
	le := binary.LittleEndian
	for _, m := range w.denseMatrices() {
		if m.int8AsBF16 {
			for _, v := range bf16Columns(m).data {
				out = le.AppendUint16(out, v)
			}
			continue
		}
		q := quantizeColumns(m)
		for _, v := range q.data {
			out = append(out, byte(v))
		}
		for _, v := range q.scale {
			out = le.AppendUint32(out, math.Float32bits(v))
		}
		for _, v := range q.corr {
			out = le.AppendUint32(out, uint32(v))
		}
	}
	return out
}
