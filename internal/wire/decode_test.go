package wire

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s", "\x00\x01\x1f\n\r\t", "é😀", "a\xffb", "\u2028\u2029", strings.Repeat("x", 1000)} {
		b := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q → %s: %v", s, b, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if back != want {
			t.Errorf("%q → %s → %q", s, b, back)
		}
	}
	for _, f := range []float64{0, 1, -1, 0.5, 1e-7, 123456789012345678, 1e21, -1e-300, math.MaxFloat64, 0.1 + 0.2} {
		b := AppendFloat(nil, f)
		var back float64
		if err := json.Unmarshal(b, &back); err != nil || back != f {
			t.Errorf("%v → %s → %v, %v", f, b, back, err)
		}
	}
	if string(AppendFloat(nil, math.NaN())) != "null" {
		t.Error("NaN is not null")
	}
}

// TestAppendArray: arrays of any length decode as what was written.
func TestAppendArray(t *testing.T) {
	for _, ss := range [][]string{nil, {}, {"a"}, {"a", "b\"c", ""}} {
		b := AppendStrings([]byte("x"), ss)
		var back []string
		if err := json.Unmarshal(b[1:], &back); err != nil || len(back) != len(ss) || strings.Join(back, "|") != strings.Join(ss, "|") {
			t.Errorf("%q → %s → %q, %v", ss, b, back, err)
		}
	}
	if b := appendInts(nil, []int{3, -1, 0}); string(b) != "[3,-1,0]" {
		t.Errorf("ints: %s", b)
	}
}

// TestFastNum checks the fast number path against strconv on the shapes it
// takes and the edges it must refuse.
func TestFastNum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lits := []string{"0", "-0", "0.0", "1", "-1", "0.1", "0.123456789012345", "123456789012345", "999999999999999",
		"0.000000000000000000001", "1234567.8901234", "-0.5", "00", "1.5e3", "1.", "-", "-.5", "01.5", "9007199254740993", "0.1234567890123456"}
	for range 20000 {
		digits := 1 + rng.IntN(17)
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteByte('-')
		}
		dot := rng.IntN(digits + 1)
		for i := range digits {
			if i == dot && i > 0 {
				b.WriteByte('.')
			}
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		lits = append(lits, b.String())
	}
	fast := 0
	for _, lit := range lits {
		want, err := strconv.ParseFloat(lit, 64)
		d := NewDecoder(lit + ",")
		got, ok := d.fastNum()
		if !ok {
			if d.pos != 0 {
				t.Fatalf("%s: refused but moved to %d", lit, d.pos)
			}
			continue
		}
		if !json.Valid([]byte(lit)) {
			// Not a JSON number: the fast path may read a valid prefix
			// ("0" of "00"), never the whole.
			if d.pos == len(lit) {
				t.Fatalf("%s: read whole as %v", lit, got)
			}
			continue
		}
		fast++
		if err != nil || got != want || math.Signbit(got) != math.Signbit(want) || d.pos != len(lit) {
			t.Fatalf("%s: fast %v (pos %d), strconv %v (%v)", lit, got, d.pos, want, err)
		}
	}
	if fast < len(lits)/2 {
		t.Fatalf("only %d of %d literals took the fast path", fast, len(lits))
	}
}

// TestAppendFloatShortest checks the decimal fast path against strconv's
// shortest formatting, digit for digit.
func TestAppendFloatShortest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vals := []float64{0.1, 0.2, 0.3, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, 0.0001, 1e-6, 1.5e-6, 999999999999999.9, 123456.789, -0.75, 0.82, 0.79}
	for range 50000 {
		switch rng.IntN(4) {
		case 0:
			vals = append(vals, rng.Float64())
		case 1:
			vals = append(vals, math.Round(rng.NormFloat64()*1e6)/1e6)
		case 2:
			vals = append(vals, float64(rng.IntN(1e9))/math.Pow10(rng.IntN(15)))
		default:
			vals = append(vals, rng.NormFloat64()*math.Pow10(rng.IntN(30)-12))
		}
	}
	for _, f := range vals {
		got := string(AppendFloat(nil, f))
		var want string
		switch a := math.Abs(f); {
		case f == math.Trunc(f) && a < 1e15:
			want = strconv.FormatInt(int64(f), 10)
		case a < 1e-6 || a >= 1e21:
			want = strconv.FormatFloat(f, 'e', -1, 64)
		default:
			want = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if got != want {
			t.Fatalf("%v: got %s want %s", f, got, want)
		}
	}
}
