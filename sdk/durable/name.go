package durable

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
)

// hashMark starts the hash that FitName puts in place of the end of a stem
// too long for its name; "~h" is never the output of the id encodings
// logbook names files with (enc(id) writes '~' only before two uppercase
// hex digits, url.PathEscape only as itself in an id of at most 80 bytes,
// too short to reach the lengths that get hashed).
const hashMark = "~h"

// hashedLen is what FitName's hash adds: hashMark and 16 hex digits.
const hashedLen = len(hashMark) + 16

// FitName returns the file name stem+suffix when it is at most
// sdk.MaxFileNameBytes long. A longer one keeps the start of stem (cut at
// a UTF-8 boundary), then "~h" and the first 16 hex digits of the SHA-256
// of the whole stem, then suffix, and is at most sdk.MaxFileNameBytes long.
// stem is a value derived from a caller's (an encoded session id); suffix
// is the fixed part of the name, shorter than sdk.MaxFileNameBytes − 18.
// The result depends only on its arguments, so a name can be found again
// by computing it.
func FitName(stem, suffix string) string {
	if len(stem)+len(suffix) <= sdk.MaxFileNameBytes {
		return stem + suffix
	}
	sum := sha256.Sum256([]byte(stem))
	return cutUTF8(stem, sdk.MaxFileNameBytes-len(suffix)-hashedLen) + hashMark + hex.EncodeToString(sum[:8]) + suffix
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// end inside a UTF-8 sequence (n ≥ 0).
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
