package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

// reference is what the page encoder must write: encoding/json's output
// for the matches' records.
func reference(t testing.TB, ms []core.Match, next *float64) []byte {
	records := make([]record.Match, len(ms))
	for i, m := range ms {
		records[i] = record.NewMatch(m)
	}
	var buf bytes.Buffer
	err := json.NewEncoder(&buf).Encode(struct {
		Data       []record.Match `json:"data"`
		NextCursor *float64       `json:"nextCursor"`
	}{records, next})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pieces are the awkward parts random strings are made of.
var pieces = []string{
	"", "a", "acme", " ", `"`, `\`, "<", ">", "&", "\n", "\r", "\t", "\b", "\f",
	"\x00", "\x1f", "\x7f", "é", "東京", "\u2028", "\u2029", "\xff", "\xe2\x80",
	"\U0001F600", "\ufffd", "https://x.com/a/status/1?q=<b>&c",
}

func randomString(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(6) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

func randomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(6) {
	case 0:
		return 0
	case 1:
		return float64(rng.Int64N(2e12)) / 1000 // a time in milliseconds
	case 2:
		return math.Float64frombits(rng.Uint64() &^ (0x7ff << 52)) // tiny
	case 3:
		return 1e21 * (1 + rng.Float64())
	case 4:
		return -rng.Float64() * 1e-7
	}
	return rng.NormFloat64() * 1e6
}

// randomTime is the zero time (no time) or a microsecond from before
// 1970 to far beyond 2100.
func randomTime(rng *rand.Rand) time.Time {
	switch rng.IntN(4) {
	case 0:
		return time.Time{}
	case 1:
		return time.UnixMicro(-rng.Int64N(1e17))
	}
	return time.UnixMicro(rng.Int64N(1e17))
}

func randomMatch(rng *rand.Rand) core.Match {
	m := core.Match{
		ID: randomString(rng), CreatedAt: randomTime(rng), Phrase: randomString(rng),
		Platform: core.Platform(randomString(rng)),
		Post: core.Post{
			Author: randomString(rng), Title: randomString(rng), Text: randomString(rng), URL: randomString(rng),
			Likes: rng.IntN(1 << 20), Comments: -rng.IntN(5), PostedAt: randomTime(rng),
		},
	}
	if rng.IntN(2) == 0 {
		m.Score = &core.Score{Value: rng.IntN(101), Intent: core.Intent(randomString(rng)), Reason: randomString(rng)}
	}
	return m
}

// encodePage is the body encodeResponse writes for the page of ms.
func encodePage(t testing.TB, ms []core.Match, next *float64) []byte {
	w := httptest.NewRecorder()
	if err := encodeResponse(context.Background(), w, response{body: newMatchPage(ms, next)}); err != nil {
		t.Fatal(err)
	}
	return w.Body.Bytes()
}

func TestMatchPageEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		ms := make([]core.Match, rng.IntN(4))
		for i := range ms {
			ms[i] = randomMatch(rng)
		}
		var next *float64
		if rng.IntN(2) == 0 {
			f := randomFloat(rng)
			next = &f
		}
		want := reference(t, ms, next)
		if got := encodePage(t, ms, next); !bytes.Equal(got, want) {
			t.Fatalf("page encoding differs from encoding/json\n got: %s\nwant: %s", got, want)
		}
	}
}

// The bytes of a page are pinned: HTML and line separators escaped,
// invalid UTF-8 replaced, no title as null, times in milliseconds.
func TestMatchPageBytes(t *testing.T) {
	m := core.Match{ID: "m1", CreatedAt: time.UnixMicro(1700000000123456), Phrase: "acme", Platform: "x",
		Score: &core.Score{Value: 80, Intent: "purchase", Reason: "a<b>&c"},
		Post:  core.Post{Author: "ada", Text: "line\n\"q\" \u2028 \xff é", URL: "https://x.com/1?a=1&b=2", Likes: 3, PostedAt: time.UnixMicro(1e15)}}
	next := 1700000000123.456
	want := `{"data":[{"id":"m1","createdAt":1700000000123.456,"phrase":"acme","platform":"x","score":80,"intent":"purchase",` +
		`"reason":"a\u003cb\u003e\u0026c","post":{"author":"ada","title":null,"text":"line\n\"q\" \u2028 \ufffd é",` +
		`"url":"https://x.com/1?a=1\u0026b=2","likes":3,"comments":0,"postedAt":1000000000000}}],"nextCursor":1700000000123.456}` + "\n"
	if got := encodePage(t, []core.Match{m}, &next); string(got) != want {
		t.Fatalf("page\n got: %s\nwant: %s", got, want)
	}
	if got := encodePage(t, nil, nil); string(got) != `{"data":[],"nextCursor":null}`+"\n" {
		t.Fatalf("empty page: %s", got)
	}
}

// FuzzMatchPageEncoding checks the page against encoding/json on
// arbitrary post text, which comes from outside.
func FuzzMatchPageEncoding(f *testing.F) {
	f.Add("acme", "Looking for an acme alternative <3 & more", 1700000000123.456)
	f.Add("\u2028\xff\x00", "\"\\\n\t", 1e-7)
	f.Fuzz(func(t *testing.T, title, text string, at float64) {
		if math.IsNaN(at) || math.IsInf(at, 0) {
			t.Skip("times are finite")
		}
		// at is the cursor, and as a time (when it is one) the match's.
		var when time.Time
		if math.Abs(at) < 1e15 {
			when = time.UnixMicro(int64(at * 1000))
		}
		ms := []core.Match{{ID: title, CreatedAt: when, Score: &core.Score{Reason: text}, Post: core.Post{Title: title, Text: text, PostedAt: when}}}
		if got, want := encodePage(t, ms, &at), reference(t, ms, &at); !bytes.Equal(got, want) {
			t.Fatalf("got %s, want %s", got, want)
		}
	})
}

// BenchmarkMatchPageEncoding writes a page of 25 typical matches as
// encodeResponse does, into its reused buffer, and reports the process's
// peak heap while it writes (peak-heap-MB).
func BenchmarkMatchPageEncoding(b *testing.B) {
	ms := make([]core.Match, 25)
	for i := range ms {
		at := time.UnixMicro(1.7e15 + int64(i))
		ms[i] = core.Match{ID: "01JD5Z8X9V2K3M4N5P6Q7R8S9T", CreatedAt: at, Phrase: "acme", Platform: "x",
			Score: &core.Score{Value: 80, Intent: "purchase", Reason: "asks for an alternative"},
			Post: core.Post{Author: "author", Title: "Looking for an acme alternative", URL: "https://x.com/author/status/123", Likes: 3,
				Text: "We have used acme for two years and the pricing keeps going up. Any alternatives that handle invoices?", PostedAt: at}}
	}
	w := discard{header: http.Header{}}
	b.ReportAllocs()
	stop := peakmem.MeasureHeap(b)
	for b.Loop() {
		if err := encodeResponse(context.Background(), w, response{body: newMatchPage(ms, nil)}); err != nil {
			b.Fatal(err)
		}
	}
	stop()
}

// discard is a ResponseWriter that keeps nothing but its headers.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}
