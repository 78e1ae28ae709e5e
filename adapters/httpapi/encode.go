package httpapi

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// The match page is the hottest answer of the API, and encoding/json
// spends most of its time there on reflection. appendMatchPage writes the
// same bytes as json.Encoder.Encode would for the page's records
// (MatchRecord), field by field and straight from the matches, without
// the records' pointers to allocate; a test compares the two on random
// matches.

// appendMatchPage appends {"data":[...],"nextCursor":...} and a newline.
func appendMatchPage(b []byte, ms []core.Match, next *float64) []byte {
	b = append(b, `{"data":[`...)
	for i := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMatch(b, &ms[i])
	}
	b = append(b, `],"nextCursor":`...)
	b = appendFloatPtr(b, next)
	return append(b, "}\n"...)
}

// appendMatch appends MatchRecord(*m) as encoding/json writes it.
func appendMatch(b []byte, m *core.Match) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, m.ID)
	b = append(b, `,"createdAt":`...)
	b = appendFloat(b, core.Millis(m.CreatedAt))
	b = append(b, `,"phrase":`...)
	b = appendString(b, m.Phrase)
	b = append(b, `,"platform":`...)
	b = appendString(b, string(m.Platform))
	if m.Score == nil {
		b = append(b, `,"score":null,"intent":null,"reason":null`...)
	} else {
		b = append(b, `,"score":`...)
		b = strconv.AppendInt(b, int64(m.Score.Value), 10)
		b = append(b, `,"intent":`...)
		b = appendString(b, string(m.Score.Intent))
		b = append(b, `,"reason":`...)
		b = appendString(b, m.Score.Reason)
	}
	p := &m.Post
	b = append(b, `,"post":{"author":`...)
	b = appendString(b, p.Author)
	b = append(b, `,"title":`...)
	if p.Title == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, p.Title)
	}
	b = append(b, `,"text":`...)
	b = appendString(b, p.Text)
	b = append(b, `,"url":`...)
	b = appendString(b, p.URL)
	b = append(b, `,"likes":`...)
	b = strconv.AppendInt(b, int64(p.Likes), 10)
	b = append(b, `,"comments":`...)
	b = strconv.AppendInt(b, int64(p.Comments), 10)
	b = append(b, `,"postedAt":`...)
	if p.PostedAt.IsZero() {
		b = append(b, "null"...)
	} else {
		b = appendFloat(b, core.Millis(p.PostedAt))
	}
	return append(b, "}}"...)
}

func appendFloatPtr(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return appendFloat(b, *f)
}

// appendFloat formats f as encoding/json does: plain notation between
// 1e-6 and 1e21, exponent notation with at least one exponent digit
// outside. NaN and infinities never occur here (times in milliseconds).
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes appendString copies as they are: printable ASCII
// but for the quote, the backslash and the three HTML escapes. One look
// up a byte keeps the loop over a post's text short.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// appendString quotes s as encoding/json does with HTML escaping on:
// <, > and & as \u003c, \u003e and \u0026, U+2028 and U+2029 escaped,
// invalid UTF-8 replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && plain[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
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
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
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
			b = append(b, `\ufffd`...)
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
