package ledger

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns prefix + "_" + a ULID: 48 bits of milliseconds then 80 random
// bits in Crockford base32, so ids sort by creation time. A run id lives as
// long as one child process (or one connection).
func NewID(prefix string, now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	u := ULID{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
	out := make([]byte, 0, len(prefix)+27)
	out = append(out, prefix...)
	out = append(out, '_')
	return string(u.Append(out))
}

// ULID is the 128 bits of an id's ULID, most significant first: ULIDs
// compare as their text does.
type ULID struct{ Hi, Lo uint64 }

// Append appends u's 26 base32 digits, most significant first.
func (u ULID) Append(out []byte) []byte {
	for i := 25; i >= 0; i-- {
		shift := uint(i * 5)
		var v uint64
		switch {
		case shift >= 64:
			v = u.Hi >> (shift - 64)
		case shift > 59:
			v = u.Lo>>shift | u.Hi<<(64-shift)
		default:
			v = u.Lo >> shift
		}
		out = append(out, crockford[v&31])
	}
	return out
}

// ParseID splits an id NewID made into its prefix and its ULID. ok is false
// for any other text, so that Append gives back exactly the id's digits.
func ParseID(id string) (prefix string, u ULID, ok bool) {
	if len(id) < 27 || id[len(id)-27] != '_' {
		return "", ULID{}, false
	}
	digits := id[len(id)-26:]
	if digits[0] > '7' {
		return "", ULID{}, false // 130 bits of digits, 128 of ULID
	}
	for i := 0; i < len(digits); i++ {
		v := crockfordValue[digits[i]]
		if v < 0 {
			return "", ULID{}, false
		}
		u.Hi = u.Hi<<5 | u.Lo>>59
		u.Lo = u.Lo<<5 | uint64(v)
	}
	return id[:len(id)-27], u, true
}

// crockfordValue is each digit's value, -1 for a byte that is not one.
var crockfordValue = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(crockford); i++ {
		t[crockford[i]] = int8(i)
	}
	return t
}()
