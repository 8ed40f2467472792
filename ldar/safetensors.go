package ldar

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// The model file is a safetensors file
// (https://huggingface.co/docs/safetensors): an 8-byte little-endian
// header length H, H bytes of JSON, then the raw little-endian tensor data.
// The JSON maps each tensor name to {"dtype", "shape", "data_offsets":
// [begin, end)} (offsets relative to the end of the header) and holds
// string metadata under "__metadata__". This package writes F32 (policies)
// or F64 (checkpoints, for exact resumption) and reads both.

// ErrFormat is wrapped by every error about a malformed model file.
var ErrFormat = errors.New("ldar: malformed model file")

const (
	maxHeader  = 16 << 20
	maxTensors = 4096
)

type stTensor struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// stFile is a decoded safetensors file.
type stFile struct {
	Meta    map[string]string
	Names   []string // in file order of their data
	Tensors map[string][]float64
	Shapes  map[string][]int
}

func formatf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// writeSafetensors writes the named tensors (in the given order) with
// metadata; f64 selects F64 instead of F32.
func writeSafetensors(w io.Writer, meta map[string]string, names []string, shapes map[string][]int, data map[string][]float64, f64 bool) error {
	size := int64(4)
	dtype := "F32"
	if f64 {
		size, dtype = 8, "F64"
	}
	head := map[string]any{}
	if len(meta) > 0 {
		head["__metadata__"] = meta
	}
	var off int64
	for _, n := range names {
		end := off + int64(len(data[n]))*size
		head[n] = stTensor{DType: dtype, Shape: shapes[n], Offsets: [2]int64{off, end}}
		off = end
	}
	hj, err := json.Marshal(head)
	if err != nil {
		return err
	}
	for len(hj)%8 != 0 { // the format pads the header with spaces
		hj = append(hj, ' ')
	}
	buf := make([]byte, 8, 8+len(hj)+int(off))
	binary.LittleEndian.PutUint64(buf, uint64(len(hj)))
	buf = append(buf, hj...)
	for _, n := range names {
		for _, v := range data[n] {
			if f64 {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			} else {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v)))
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

// readSafetensors parses a whole safetensors file, checking every offset,
// shape and value.
func readSafetensors(b []byte) (*stFile, error) {
	if len(b) < 8 {
		return nil, formatf("%d bytes: too short for a header", len(b))
	}
	hl := binary.LittleEndian.Uint64(b)
	if hl > maxHeader || hl > uint64(len(b)-8) {
		return nil, formatf("header length %d exceeds the file (%d bytes) or %d", hl, len(b), maxHeader)
	}
	hj := b[8 : 8+hl]
	data := b[8+hl:]
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(hj))
	if err := dec.Decode(&raw); err != nil {
		return nil, formatf("header: %v", err)
	}
	if len(raw) > maxTensors+1 {
		return nil, formatf("%d header entries", len(raw))
	}
	f := &stFile{Meta: map[string]string{}, Tensors: map[string][]float64{}, Shapes: map[string][]int{}}
	type span struct {
		name       string
		begin, end int64
	}
	var spans []span
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Meta); err != nil {
				return nil, formatf("__metadata__ must map strings to strings: %v", err)
			}
			continue
		}
		var t stTensor
		d := json.NewDecoder(bytes.NewReader(msg))
		d.DisallowUnknownFields()
		if err := d.Decode(&t); err != nil {
			return nil, formatf("tensor %q: %v", name, err)
		}
		var size int64
		switch t.DType {
		case "F32":
			size = 4
		case "F64":
			size = 8
		default:
			return nil, formatf("tensor %q: dtype %q (want F32 or F64)", name, t.DType)
		}
		n := int64(1)
		for _, s := range t.Shape {
			if s < 0 || s > 1<<28 || n*int64(s) > 1<<28 {
				return nil, formatf("tensor %q: shape %v too large or negative", name, t.Shape)
			}
			n *= int64(s)
		}
		bg, en := t.Offsets[0], t.Offsets[1]
		if bg < 0 || en < bg || en > int64(len(data)) || en-bg != n*size {
			return nil, formatf("tensor %q: data_offsets %v do not hold shape %v of %s in %d data bytes", name, t.Offsets, t.Shape, t.DType, len(data))
		}
		vals := make([]float64, n)
		seg := data[bg:en]
		for i := range vals {
			var v float64
			if size == 4 {
				v = float64(math.Float32frombits(binary.LittleEndian.Uint32(seg[4*i:])))
			} else {
				v = math.Float64frombits(binary.LittleEndian.Uint64(seg[8*i:]))
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, formatf("tensor %q: value %d is %v", name, i, v)
			}
			vals[i] = v
		}
		f.Tensors[name] = vals
		f.Shapes[name] = slices.Clone(t.Shape)
		spans = append(spans, span{name, bg, en})
	}
	// The data must be exactly covered, without overlap.
	slices.SortFunc(spans, func(a, b span) int {
		if a.begin != b.begin {
			return int(min(max(a.begin-b.begin, -1), 1))
		}
		return int(min(max(a.end-b.end, -1), 1))
	})
	var at int64
	for _, s := range spans {
		if s.begin != at {
			return nil, formatf("tensor %q starts at byte %d, want %d (gap or overlap)", s.name, s.begin, at)
		}
		at = s.end
		f.Names = append(f.Names, s.name)
	}
	if at != int64(len(data)) {
		return nil, formatf("%d data bytes, tensors cover %d", len(data), at)
	}
	return f, nil
}
