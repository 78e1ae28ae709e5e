package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/earshothq/earshot/core"
)

// ingestJSON are the options an ingest body is read with: encoding/json's
// own (a name matches a field whatever its case, the last of two equal
// names wins, invalid UTF-8 becomes U+FFFD, a value is merged into what
// an earlier one left), so a body means what it always has. Only errors
// are reported the library's way: a row stops at its first value of the
// wrong type, rather than being checked whole before it is decoded,
// which would read every row twice; such a row is dropped whole anyway.
var ingestJSON = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false))

// readIngest reads an ingest body as a stream: the posts are decoded one
// by one as they come and counted, and past the 101st the rest is only
// checked to be JSON, never decoded, so a flood of tiny posts costs no
// slice entry each. The answers are the ones the body has always had, in
// this order: a body that is not a JSON object is invalid_json; a posts
// array over the limit (any of them, should the name come twice) is the
// batch limit; a platform that is not a string or posts that are not an
// array is one invalid_parameter, a missing platform another. A row that
// is not a post is no error: it becomes the zero post, which validation
// skips and counts.
func readIngest(body []byte) (ingestRequest, error) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' {
		return ingestRequest{}, errNotObject()
	}
	r := ingestReader{dec: jsontext.NewDecoder(bytes.NewBuffer(body), ingestJSON), body: body}
	if err := r.read(); err != nil {
		if !json.Valid(t) {
			return ingestRequest{}, errNotObject()
		}
		// The object is sound, but spaces JSON does not allow (a no-break
		// space, a form feed) stand around it: always answered as a body
		// of the wrong shape, unless its posts were already too many.
		if r.over {
			return ingestRequest{}, core.CheckIngestBatch(core.MaxIngestBatch + 1)
		}
		return ingestRequest{}, errWrongShape()
	}
	switch {
	case r.over:
		return ingestRequest{}, core.CheckIngestBatch(core.MaxIngestBatch + 1)
	case r.wrongShape:
		return ingestRequest{}, errWrongShape()
	case r.platform == nil:
		return ingestRequest{}, core.Errorf(core.KindInvalid, "platform is required: facebook, x or reddit")
	}
	if r.wrongRow && r.arrays > 1 {
		// A wrong row anywhere makes encoding/json read the last posts
		// array afresh, each row on its own, rather than over what
		// earlier arrays of the same name left.
		r.posts = nil
		if r.lastArray != nil {
			dec := jsontext.NewDecoder(bytes.NewBuffer(r.lastArray), ingestJSON)
			if _, err := dec.ReadToken(); err != nil || r.rows(dec) != nil {
				return ingestRequest{}, errWrongShape() // cannot be: the array was read once already
			}
		}
	}
	out := ingestRequest{platform: *r.platform, posts: make([]core.IngestPost, len(r.posts)), unread: r.unread, unreadPhrases: r.unreadPhrases}
	for i, p := range r.posts {
		out.posts[i] = p.post()
	}
	return out, nil
}

func (p ingestPostJSON) post() core.IngestPost {
	return core.IngestPost{ExternalID: p.ExternalID, AuthorName: p.AuthorName, Body: p.Body, URL: p.URL,
		Likes: int(p.Likes), Comments: int(p.Comments), Title: p.Title, PostedAt: p.PostedAt, Community: p.Community}
}

// wholeNumber is an integer member of a post (likes, comments) as the
// published schema (JSON Schema 2020-12) has it: any number whose value
// is whole, however written, so 1e2 and 1.0 are read as 100 and 1, as
// every JSON reader that knows only numbers reads them. Anything else (a
// fraction, a value past an int, a string) is a value of the wrong type,
// which makes the row no post; null leaves what was there, as for an int.
type wholeNumber int

var errNotWhole = errors.New("not a whole number")

// UnmarshalJSON is the v1 method, so that encoding/json reads the type
// as the ingest reader does.
func (n *wholeNumber) UnmarshalJSON(v []byte) error {
	switch jsontext.Value(v).Kind() {
	case 'n':
		return nil
	case '0':
	default:
		return errNotWhole
	}
	if i, err := strconv.ParseInt(string(v), 10, 0); err == nil {
		*n = wholeNumber(i)
		return nil
	}
	// ParseFloat is exact for every whole number up to 2^53, and refuses
	// what overflows a float64 rather than allocate for it.
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt || f >= math.MaxInt {
		return errNotWhole
	}
	*n = wholeNumber(f)
	return nil
}

func errNotObject() error {
	return core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
}

func errWrongShape() error {
	return core.Errorf(core.KindInvalid, "platform must be a string and posts an array")
}

// ingestReader is what one pass over an ingest body found.
type ingestReader struct {
	dec      *jsontext.Decoder
	body     []byte
	platform *string
	// posts are the rows of the last posts array, each decoded over what
	// an earlier array left at its index, as encoding/json decodes into a
	// slice; nil after posts: null.
	posts     []ingestPostJSON
	arrays    int    // posts arrays read
	lastArray []byte // the text of the last, when posts was an array last
	over      bool   // a posts array holds more than core.MaxIngestBatch rows
	// wrongShape: platform was neither a string nor null, or posts neither
	// an array nor null. wrongRow: a row of some posts array was not a post.
	wrongShape, wrongRow bool
	// unread is the last unreadCommunities, as sent; ingest judges it, as
	// only a reddit batch heeds it. unreadPhrases is the last
	// unreadPhrases, as sent, judged by ingest too.
	unread        core.UnreadCommunities
	unreadPhrases core.UnreadPhrases
}

// read reads the one object of the body and what follows it, which must
// be nothing; it fails only where the body is not JSON.
func (r *ingestReader) read() error {
	dec := r.dec
	if _, err := dec.ReadToken(); err != nil { // '{', as the caller saw
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		// encoding/json matches a name to a field under Unicode case
		// folding, as strings.EqualFold compares.
		switch key := name.String(); {
		case strings.EqualFold(key, "platform"):
			err = r.readPlatform()
		case strings.EqualFold(key, "posts"):
			err = r.readPosts()
		case strings.EqualFold(key, "unreadCommunities"):
			var u core.UnreadCommunities
			u.Names, u.Invalid, u.Over, err = readNames(dec, core.MaxUnreadCommunities)
			r.unread = u
		case strings.EqualFold(key, "unreadPhrases"):
			var u core.UnreadPhrases
			u.Texts, u.Invalid, u.Over, err = readNames(dec, core.MaxUnreadPhrases)
			r.unreadPhrases = u
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return errTrailing
	}
	return nil
}

var errTrailing = errors.New("data after the object")

// skipRest reads past the rest of a value whose decoding stopped part
// way: back to depth, the nesting the value started at, and past the
// value itself if nothing of it was read (at is where it started).
func skipRest(dec *jsontext.Decoder, depth int, at int64) error {
	if dec.StackDepth() == depth && dec.InputOffset() == at {
		return dec.SkipValue()
	}
	for dec.StackDepth() > depth {
		var err error
		switch dec.PeekKind() {
		case '}', ']':
			_, err = dec.ReadToken()
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *ingestReader) readPlatform() error {
	switch r.dec.PeekKind() {
	case 'n':
		r.platform = nil
	case '"':
		tok, err := r.dec.ReadToken()
		if err != nil {
			return err
		}
		s := tok.String()
		r.platform = &s
		return nil
	default:
		r.wrongShape = true
	}
	return r.dec.SkipValue()
}

func (r *ingestReader) readPosts() error {
	dec := r.dec
	switch dec.PeekKind() {
	case 'n':
		r.posts, r.lastArray = nil, nil
		return dec.SkipValue()
	case '[':
	default:
		r.wrongShape = true
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	start := dec.InputOffset() - 1 // at the '['
	r.arrays++
	if err := r.rows(dec); err != nil {
		return err
	}
	r.lastArray = r.body[start:dec.InputOffset()]
	return nil
}

// readNames reads a list of names (unreadCommunities, unreadPhrases):
// null is none, as absent; an array keeps its strings up to limit and is
// only checked to be JSON beyond, so the names a body can make the server
// hold are bounded by limit, over being set and names dropped once it
// holds more; any other value, or an element that is not a string, sets
// invalid and is read past. The last of two equal member names wins, as
// its caller keeps only the last list read.
func readNames(dec *jsontext.Decoder, limit int) (names []string, invalid, over bool, err error) {
	switch dec.PeekKind() {
	case 'n':
		return nil, false, false, dec.SkipValue()
	case '[':
	default:
		return nil, true, false, dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, false, false, err
	}
	for dec.PeekKind() != ']' {
		if dec.PeekKind() != '"' || invalid || over {
			invalid = invalid || dec.PeekKind() != '"'
			if err := dec.SkipValue(); err != nil {
				return nil, false, false, err
			}
			continue
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false, false, err
		}
		if len(names) == limit {
			over, names = true, nil
			continue
		}
		names = append(names, tok.String())
	}
	_, err = dec.ReadToken()
	return names, invalid, over, err
}

// rows reads the rows of a posts array whose '[' was read, up to its ']',
// into r.posts from index 0 on, each over what an earlier array left at
// its index; past the limit, rows are checked and skipped.
func (r *ingestReader) rows(dec *jsontext.Decoder) error {
	if r.posts == nil {
		// Room for the limit at once: encoding/json grows the slice
		// instead, but keeps every element an earlier array reached
		// either way, so what a row is merged into is the same.
		r.posts = make([]ingestPostJSON, 0, core.MaxIngestBatch)
	}
	r.posts = r.posts[:0]
	for i := 0; dec.PeekKind() != ']'; i++ {
		if r.over || i == core.MaxIngestBatch {
			r.over = true
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		r.posts = r.posts[:i+1]
		depth, at := dec.StackDepth(), dec.InputOffset()
		err := jsonv2.UnmarshalDecode(dec, &r.posts[i])
		if err == nil {
			continue
		}
		var semantic *jsonv2.SemanticError
		var syntactic *jsontext.SyntacticError
		if errors.As(err, &syntactic) || !errors.As(err, &semantic) {
			return err
		}
		// A value of the wrong type: the row is no post. The rest of it
		// is read past, as encoding/json does.
		r.wrongRow = true
		r.posts[i] = ingestPostJSON{}
		if err := skipRest(dec, depth, at); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}
