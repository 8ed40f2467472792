package wire

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Responses are appended to byte slices by hand, for the same reason
// requests are decoded by hand: a selection response carries up to
// MaxCurvePoints scores and every selected id, and reflection would cost more
// than the selection.

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD and
// U+2028/U+2029 are escaped, as encoding/json does, so the output is safe to
// embed in JavaScript.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendFloat appends a finite float in the shortest form that reads back
// exactly. Non-finite values (which validation keeps out) become null
// rather than invalid JSON.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e15 {
		// Scores usually have a few decimals. The fewest decimals k with
		// round(f·10^k)/10^k == f (both exact, so the division rounds once)
		// is the shortest form that reads back as f: what strconv's
		// shortest formatting prints, found without its general algorithm.
		for k := 1; k < len(pow10); k++ {
			m := math.Round(abs * pow10[k])
			if m >= 1<<53 {
				break
			}
			if m/pow10[k] == abs {
				return appendDecimal(b, f < 0, uint64(m), k)
			}
		}
	}
	format := byte('f')
	if abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64)
}

// AppendArray appends a JSON array of n elements, elem appending
// element i.
func AppendArray(b []byte, n int, elem func(b []byte, i int) []byte) []byte {
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, i)
	}
	return append(b, ']')
}

// AppendStrings appends ss as a JSON array of strings.
func AppendStrings(b []byte, ss []string) []byte {
	return AppendArray(b, len(ss), func(b []byte, i int) []byte { return AppendString(b, ss[i]) })
}

// appendInts appends xs as a JSON array of numbers.
func appendInts(b []byte, xs []int) []byte {
	return AppendArray(b, len(xs), func(b []byte, i int) []byte { return AppendInt(b, xs[i]) })
}

// AppendInt appends n in decimal.
func AppendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// appendDecimal appends m·10^-k in positional notation (k > 0).
func appendDecimal(b []byte, neg bool, m uint64, k int) []byte {
	if neg {
		b = append(b, '-')
	}
	var buf [24]byte
	digits := strconv.AppendUint(buf[:0], m, 10)
	if len(digits) <= k {
		b = append(b, '0', '.')
		for range k - len(digits) {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	b = append(b, digits[:len(digits)-k]...)
	b = append(b, '.')
	return append(b, digits[len(digits)-k:]...)
}
