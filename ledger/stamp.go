package ledger

import "time"

// stamp formats record times, reusing the second's text while records keep
// coming within it: time.Format was a tenth of the recorder's work.
type stamp struct {
	utcSec   int64
	utc      []byte // "2006-01-02T15:04:05" of utcSec
	localSec int64
	local    []byte // "15:04:05" of localSec, in the local zone
}

// appendRFC3339Nano appends t as t.UTC().Format(time.RFC3339Nano) would.
func (s *stamp) appendRFC3339Nano(b []byte, t time.Time) []byte {
	t = t.UTC()
	if sec := t.Unix(); sec != s.utcSec || s.utc == nil {
		s.utcSec, s.utc = sec, t.AppendFormat(s.utc[:0], "2006-01-02T15:04:05")
	}
	b = append(b, s.utc...)
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i > 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, 'Z')
}

// appendClock appends t as t.Local().Format("15:04:05.000") would.
func (s *stamp) appendClock(b []byte, t time.Time) []byte {
	t = t.Local()
	if sec := t.Unix(); sec != s.localSec || s.local == nil {
		s.localSec, s.local = sec, t.AppendFormat(s.local[:0], "15:04:05")
	}
	ms := t.Nanosecond() / 1e6
	return append(append(b, s.local...), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
}
