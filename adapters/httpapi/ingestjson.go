package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// parseIngest decodes the usual ingest body in one pass without
// reflection: encoding/json took about a fifth of a batch's time on the
// server. It gives exactly what json.Unmarshal would give into
// {Platform *string; Posts []ingestPostJSON} with the platform set, and
// ok is false for anything it is not certain of (a syntax error, a
// field of the wrong type, a duplicate or non-ASCII key, a batch over
// the limit, a number that is not a plain integer ...): the caller then
// decodes with encoding/json, which decides the answer.
//
// The body is copied into one string, and the strings it returns are
// parts of that one: a request's posts live as long as the request.
func parseIngest(body []byte) (platform string, posts []ingestPostJSON, ok bool) {
	p := ingestParser{b: string(body)}
	p.ws()
	if !p.eat('{') {
		return "", nil, false
	}
	var seenPlatform, seenPosts bool
	posts = []ingestPostJSON{}
	p.ws()
	if p.eat('}') {
		return "", nil, false // no platform
	}
	for {
		key, ok := p.key()
		if !ok {
			return "", nil, false
		}
		switch {
		case foldEq(key, "platform"):
			if seenPlatform {
				return "", nil, false
			}
			seenPlatform = true
			if platform, ok = p.str(); !ok {
				return "", nil, false
			}
		case foldEq(key, "posts"):
			if seenPosts {
				return "", nil, false
			}
			seenPosts = true
			if posts, ok = p.posts(); !ok {
				return "", nil, false
			}
		default:
			if !p.skip(0) {
				return "", nil, false
			}
		}
		if !p.next('}') {
			if p.failed {
				return "", nil, false
			}
			break
		}
	}
	p.ws()
	if p.i != len(p.b) || !seenPlatform {
		return "", nil, false
	}
	return platform, posts, true
}

// ingestParser reads JSON from b at i. Every method reports false, or
// sets failed, on input it does not take.
type ingestParser struct {
	b      string
	i      int
	failed bool
	parts  []string // backing array for the posts' bodies, to allocate once
}

// foldEq reports whether the ASCII name key equals name under ASCII case
// folding, which is how encoding/json matches such a name to a field.
func foldEq(key, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := 0; i < len(key); i++ {
		a, b := key[i], name[i]
		if a >= 'a' && a <= 'z' {
			a -= 'a' - 'A'
		}
		if b >= 'a' && b <= 'z' {
			b -= 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

func (p *ingestParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *ingestParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// next reads the separator after a member or element: true for a comma,
// so another follows; false for the closing byte, or with failed set
// for anything else.
func (p *ingestParser) next(end byte) bool {
	p.ws()
	if p.eat(',') {
		p.ws()
		return true
	}
	if !p.eat(end) {
		p.failed = true
	}
	return false
}

// key reads a member name and its colon. Only plain ASCII names are
// taken: encoding/json matches names with Unicode case folding, which
// this does not repeat.
func (p *ingestParser) key() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			k := p.b[start:p.i]
			p.i++
			p.ws()
			if !p.eat(':') {
				return "", false
			}
			p.ws()
			return k, true
		case c < 0x20 || c >= utf8.RuneSelf || c == '\\':
			return "", false
		}
		p.i++
	}
	return "", false
}

// str reads a string value. One with escapes or bytes that are not
// UTF-8 is unquoted by encoding/json itself, so the result is its own.
func (p *ingestParser) str() (string, bool) {
	start := p.i
	if !p.eat('"') {
		return "", false
	}
	// Most strings have no escapes: find the closing quote at once.
	if n := strings.IndexByte(p.b[p.i:], '"'); n >= 0 {
		raw := p.b[p.i : p.i+n]
		if strings.IndexByte(raw, '\\') < 0 {
			ascii := true
			for i := 0; i < len(raw); i++ {
				if raw[i] < 0x20 {
					return "", false
				}
				ascii = ascii && raw[i] < utf8.RuneSelf
			}
			p.i += n + 1
			if ascii || utf8.ValidString(raw) {
				return raw, true
			}
			return p.unquote(start)
		}
	}
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.unquote(start)
		case c < 0x20:
			return "", false
		case c == '\\':
			p.i++ // the escaped byte cannot end the string
		}
		p.i++
	}
	return "", false
}

// unquote decodes the string that starts at start and ends before i.
func (p *ingestParser) unquote(start int) (string, bool) {
	var s string
	if json.Unmarshal([]byte(p.b[start:p.i]), &s) != nil {
		return "", false
	}
	return s, true
}

// null reads the literal null if it is next.
func (p *ingestParser) null() bool {
	if strings.HasPrefix(p.b[p.i:], "null") {
		p.i += 4
		return true
	}
	return false
}

// optStr reads a string, or null, which leaves the field as it was.
func (p *ingestParser) optStr(dst *string) bool {
	if p.null() {
		return true
	}
	s, ok := p.str()
	*dst = s
	return ok
}

// integer reads a number written as a plain integer that fits an int, or
// null. A fraction or an exponent is an error for encoding/json here.
func (p *ingestParser) integer(dst *int) bool {
	if p.null() {
		return true
	}
	start := p.i
	p.eat('-')
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i-digits > 1) {
		return false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	n, err := strconv.ParseInt(p.b[start:p.i], 10, strconv.IntSize)
	*dst = int(n)
	return err == nil
}

// float reads any JSON number into a new float64, or null, which leaves
// dst nil, as encoding/json does for a *float64. A number out of a
// float64's range is an error for encoding/json.
func (p *ingestParser) float(dst **float64) bool {
	if p.null() {
		*dst = nil
		return true
	}
	start := p.i
	if p.i >= len(p.b) || !p.number() {
		return false
	}
	f, err := strconv.ParseFloat(p.b[start:p.i], 64)
	if err != nil {
		return false
	}
	*dst = &f
	return true
}

// posts reads the posts array.
func (p *ingestParser) posts() ([]ingestPostJSON, bool) {
	if !p.eat('[') {
		return nil, false
	}
	out := make([]ingestPostJSON, 0, core.MaxIngestBatch)
	p.ws()
	if p.eat(']') {
		return out, true
	}
	for {
		if len(out) == core.MaxIngestBatch {
			return nil, false
		}
		var post ingestPostJSON
		if !p.null() && !p.post(&post) {
			return nil, false
		}
		out = append(out, post)
		if !p.next(']') {
			return out, !p.failed
		}
	}
}

// postFields are the members of a post, in the order post reads them
// into; any other member is skipped, as encoding/json skips it.
var postFields = [...]string{"externalId", "authorName", "body", "url", "likes", "comments", "title", "postedAt", "community"}

// post reads one post object.
func (p *ingestParser) post(dst *ingestPostJSON) bool {
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return true
	}
	var seen [len(postFields)]bool
	for {
		key, ok := p.key()
		if !ok {
			return false
		}
		field := -1
		for i, name := range postFields {
			if foldEq(key, name) {
				field = i
				break
			}
		}
		if field >= 0 {
			if seen[field] {
				return false
			}
			seen[field] = true
		}
		switch field {
		case 0:
			ok = p.optStr(&dst.ExternalID)
		case 1:
			ok = p.optStr(&dst.AuthorName)
		case 2:
			ok = p.body(&dst.Body)
		case 3:
			ok = p.optStr(&dst.URL)
		case 4:
			ok = p.integer(&dst.Likes)
		case 5:
			ok = p.integer(&dst.Comments)
		case 6:
			ok = p.optStr(&dst.Title)
		case 7:
			ok = p.float(&dst.PostedAt)
		case 8:
			ok = p.optStr(&dst.Community)
		default:
			ok = p.skip(0)
		}
		if !ok {
			return false
		}
		if !p.next('}') {
			return !p.failed
		}
	}
}

// body reads an array of strings, in which null reads as "", or null.
func (p *ingestParser) body(dst *[]string) bool {
	if p.null() {
		return true
	}
	if !p.eat('[') {
		return false
	}
	if p.parts == nil {
		p.parts = make([]string, 0, core.MaxIngestBatch)
	}
	start := len(p.parts)
	p.ws()
	if !p.eat(']') {
		for {
			var s string
			if !p.optStr(&s) {
				return false
			}
			p.parts = append(p.parts, s)
			if !p.next(']') {
				if p.failed {
					return false
				}
				break
			}
		}
	}
	// A part of the shared array, capped so that appending to it copies.
	*dst = p.parts[start:len(p.parts):len(p.parts)]
	return true
}

// maxSkipDepth bounds the nesting of an ignored value; deeper ones are
// left to encoding/json.
const maxSkipDepth = 32

// skip reads and checks any JSON value whose content is ignored.
func (p *ingestParser) skip(depth int) bool {
	if p.i >= len(p.b) || depth > maxSkipDepth {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		_, ok := p.str()
		return ok
	case c == '{':
		p.i++
		p.ws()
		if p.eat('}') {
			return true
		}
		for {
			if _, ok := p.str(); !ok {
				return false
			}
			p.ws()
			if !p.eat(':') {
				return false
			}
			p.ws()
			if !p.skip(depth + 1) {
				return false
			}
			if !p.next('}') {
				return !p.failed
			}
		}
	case c == '[':
		p.i++
		p.ws()
		if p.eat(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			if !p.next(']') {
				return !p.failed
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, lit := range [...]string{"null", "true", "false"} {
			if strings.HasPrefix(p.b[p.i:], lit) {
				p.i += len(lit)
				return true
			}
		}
		return false
	}
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *ingestParser) number() bool {
	p.eat('-')
	digits := func() int {
		start := p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		return p.i - start
	}
	start := p.i
	n := digits()
	if n == 0 || (p.b[start] == '0' && n > 1) {
		return false
	}
	if p.eat('.') && digits() == 0 {
		return false
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// countPosts returns the length of the longest posts array among the
// members of the valid JSON object body that encoding/json would decode
// into the posts field, counting at most MaxIngestBatch+1 elements: it
// reads element by element, so a body of a million posts costs no more
// than one of 101.
func countPosts(body []byte) int {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	most := 0
	var skip json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return most
		}
		key, _ := t.(string)
		if !jsonNameIs(key, "posts") {
			if dec.Decode(&skip) != nil {
				return most
			}
			continue
		}
		if !dec.More() {
			return most
		}
		// A value that is not an array is read whole: it is no batch.
		if t, err = dec.Token(); err != nil {
			return most
		} else if t != json.Delim('[') {
			if d, ok := t.(json.Delim); ok && d == '{' {
				if skipRest(dec) != nil {
					return most
				}
			}
			continue
		}
		n := 0
		for dec.More() {
			if n++; n > core.MaxIngestBatch {
				return n
			}
			if dec.Decode(&skip) != nil {
				return max(most, n)
			}
		}
		if _, err := dec.Token(); err != nil {
			return max(most, n)
		}
		most = max(most, n)
	}
	return most
}

// skipRest reads the members of an object whose opening brace was read.
func skipRest(dec *json.Decoder) error {
	var skip json.RawMessage
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return err
		}
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// jsonNameIs reports whether encoding/json decodes a member named key
// into a field named name: the same name after upper-casing each rune,
// which is how it folds names (so "poſts" is "posts").
func jsonNameIs(key, name string) bool {
	i := 0
	for _, r := range key {
		if i >= len(name) {
			return false
		}
		n, size := utf8.DecodeRuneInString(name[i:])
		if unicode.ToUpper(r) != unicode.ToUpper(n) {
			return false
		}
		i += size
	}
	return i == len(name)
}
