package helper_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
)

type answerTransport struct {
	status int
	header http.Header
	body   string
	more   bool // the answer goes on without end after body
	read   int64
}

func (a *answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	var rd io.Reader = strings.NewReader(a.body)
	if a.more {
		rd = io.MultiReader(rd, endless{})
	}
	body := &countingReader{r: rd, n: &a.read}
	return &http.Response{StatusCode: a.status, Header: a.header.Clone(), Body: io.NopCloser(body), Request: r}, nil
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// endless is an answer that never ends: JSON white space, forever.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// FuzzServerAnswers hands the client any answer the server (or a proxy
// in front of it) could send to GET /phrases and GET /proxy: a status,
// a Retry-After and a body, which may go on without end after the
// fuzzed bytes. The seeds are the spec's answers (client_test.go's) and
// hostile ones. It checks: no panic; at most 4 MB read of one answer;
// every wait between two tries within (0, MaxWait]; and a 429 or a 503
// naming a Retry-After is asked again, as the client promises, however
// large the wait it names.
func FuzzServerAnswers(f *testing.F) {
	for _, c := range []struct {
		status uint16
		retry  string
		body   string
	}{
		{200, "", `{"phrases":["acme"],"items":[{"phrase":"acme","community":"golang"}]}`},
		{200, "", `{"required":true,"proxy":{"server":"http://127.0.0.1:3128","username":"u","password":"p"}}`},
		{429, "30", `{"error":{"code":"rate_limited","message":"slow down"}}`},
		{503, "", `{"error":{"code":"unavailable","message":"no proxy"}}`},
		{503, "Wed, 21 Oct 2015 07:28:00 GMT", ``},
		{429, "9223372036854775807", ``},
		{429, "9300000000", ``},
		{500, "", `<html>`},
		{401, "", `{"error":{"code":"unauthorized","message":"` + strings.Repeat("x", 100) + `"}}`},
		{200, "", `{"phrases":`},
	} {
		f.Add(c.status, c.retry, c.body, false, false)
		f.Add(c.status, c.retry, c.body, true, false)
	}
	f.Add(uint16(200), "", `{"phrases":[`, false, true)
	f.Add(uint16(503), "1", `{"error":`, true, true)
	f.Fuzz(func(t *testing.T, status uint16, retry, body string, proxy, more bool) {
		code := int(status)
		if code < 200 || code > 599 {
			code = 200 + code%400
		}
		tr := &answerTransport{status: code, header: http.Header{}, body: body, more: more}
		if retry != "" && !strings.ContainsAny(retry, "\r\n\x00") {
			tr.header.Set("Retry-After", retry)
		}
		c, err := helper.NewClient("http://127.0.0.1:1", "ik_test", &http.Client{Transport: tr})
		if err != nil {
			t.Fatal(err)
		}
		c.Attempts, c.MaxWait = 2, time.Minute
		var waits []time.Duration
		c.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
		if proxy {
			_, err = c.Proxy(context.Background())
		} else {
			_, err = c.Phrases(context.Background(), "reddit")
		}
		if tr.read > 2*(4<<20) {
			t.Errorf("read %d bytes of two answers", tr.read)
		}
		for _, d := range waits {
			if d <= 0 || d > c.MaxWait {
				t.Errorf("waited %v between tries", d)
			}
		}
		if code/100 != 2 && err == nil {
			t.Errorf("answer %d taken", code)
		}
		if n, nerr := strconv.Atoi(strings.TrimSpace(retry)); nerr == nil && n >= 0 &&
			(code == 429 || code == 503) && len(waits) == 0 && !errors.Is(err, helper.ErrNoProxy) {
			t.Errorf("a %d naming Retry-After %q was not asked again: %v", code, retry, err)
		}
	})
}
