package jsonv

import (
	"math"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// maxSafeDigits is 2^53−1, the largest integer-form magnitude (rule J9).
const maxSafeDigits = "9007199254740991"

// plainLimit is the longest literal without exponent whose rules J7 and J8
// are decided on its digits alone: with at most 300 digits before the point
// the value is below 1e300 (finite), and with at most 300 after it a nonzero
// value is at least 1e-300 (no underflow to zero).
const plainLimit = 300

// scanNumber scans the number literal at src[i:] (src[i] is '-' or a digit)
// and checks rules J7–J9. It returns the index past the literal, flagInt for
// an integer-form literal, the code of the first broken rule ("" for none)
// and, for a literal that breaks the grammar, the offset of the offending
// byte (else -1).
func scanNumber(src []byte, i int) (end int, flags uint32, rule sdk.Code, bad int) {
	n := len(src)
	neg := src[i] == '-'
	if neg {
		i++
	}
	if i >= n {
		return i, 0, "", i
	}
	zero := true // every digit so far is '0'
	intStart := i
	switch c := src[i]; {
	case c == '0':
		i++
		if i < n && src[i]-'0' <= 9 {
			return i, 0, "", i // leading zero
		}
	case c-'1' <= 8:
		zero = false
		i++
		for i < n && src[i]-'0' <= 9 {
			i++
		}
	default:
		return i, 0, "", i
	}
	intEnd := i
	frac, exp := false, false
	if i < n && src[i] == '.' {
		frac = true
		i++
		if i >= n || src[i]-'0' > 9 {
			return i, 0, "", i
		}
		for i < n && src[i]-'0' <= 9 {
			if src[i] != '0' {
				zero = false
			}
			i++
		}
	}
	if i < n && src[i]|0x20 == 'e' {
		exp = true
		i++
		if i < n && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= n || src[i]-'0' > 9 {
			return i, 0, "", i
		}
		for i < n && src[i]-'0' <= 9 {
			i++
		}
	}
	start := intStart
	if neg {
		start--
	}
	switch {
	case !frac && !exp:
		if neg && zero {
			return i, 0, sdk.CodeJSONNegativeZero, -1
		}
		if nd := intEnd - intStart; nd >= len(maxSafeDigits) {
			if nd > 308 && math.IsInf(parseFloat(src[start:i]), 0) {
				return i, 0, sdk.CodeJSONNumberNotFinite, -1
			}
			if nd > len(maxSafeDigits) || string(src[intStart:intEnd]) > maxSafeDigits {
				return i, 0, sdk.CodeJSONUnsafeInteger, -1
			}
		}
		return i, flagInt, "", -1
	case !exp && i-start <= plainLimit:
		if neg && zero {
			return i, 0, sdk.CodeJSONNegativeZero, -1
		}
		return i, 0, "", -1
	}
	f := parseFloat(src[start:i])
	if math.IsInf(f, 0) {
		return i, 0, sdk.CodeJSONNumberNotFinite, -1
	}
	if neg && f == 0 {
		return i, 0, sdk.CodeJSONNegativeZero, -1
	}
	return i, 0, "", -1
}

// parseFloat converts a literal that passed the JSON number grammar; the
// only error strconv can report for it is a range error, whose ±Inf result
// is what we want.
func parseFloat(lit []byte) float64 {
	f, _ := strconv.ParseFloat(string(lit), 64)
	return f
}

// parseInt converts an integer-form literal of at most 16 digits.
func parseInt(lit []byte) int64 {
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	var v int64
	for _, c := range lit {
		v = v*10 + int64(c-'0')
	}
	if neg {
		return -v
	}
	return v
}
