package llmscorer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/adapters/llmscorer"
	"github.com/earshothq/earshot/core"
)

// fallbackMark is the verdict of the fuzz target's fallback: a score no
// model verdict can carry, so that which of the two answered is plain.
var fallbackMark = core.Score{Value: -1, Intent: core.Intent("fallback"), Reason: "fallback"}

type markScorer struct{}

func (markScorer) Score(context.Context, core.Match) (core.Score, error) { return fallbackMark, nil }

// countingBody is a model's answer body that counts what is read of it;
// endless makes it go on past the fuzzed bytes with ever more JSON
// whitespace, as a server that never stops writing would.
type countingBody struct {
	r       io.Reader
	endless bool
	read    int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.endless {
		for i := range p {
			p[i] = ' '
		}
		n, err = len(p), nil
	}
	b.read += int64(n)
	return n, err
}

func (b *countingBody) Close() error { return nil }

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzAnswer hands the scorer any answer body a model server could send
// (the chat completions shape of answer, as in llmscorer_test.go, and
// hostile variants of it) and checks what the scorer promises: no
// panic, at most 1 MB and a little read of the body however long it
// runs, and either the fallback's verdict or a model verdict that is
// sound (a score from 0 to 100, a known intent, a one-line reason of at
// most core.MaxReasonLen characters).
func FuzzAnswer(f *testing.F) {
	for _, c := range []string{
		`{"score": 88, "intent": "recommendation", "reason": "asks for alternatives to Mailchimp"}`,
		"```json\n{\"score\": 40, \"intent\": \"Question\", \"reason\": \"how-to\"}\n```",
		"```{\"score\": 40, \"intent\": \"question\", \"reason\": \"x\"}```",
		`{"score": 88.0, "intent": "buying", "reason": "` + strings.Repeat("é", 300) + `"}`,
		`{"score": 1e400, "intent": "buying", "reason": "r"}`,
		`{"score": -0, "intent": "buying", "reason": "r"}`,
		`{"score": 9223372036854775808, "intent": "buying", "reason": "r"}`,
		`{"score": 50, "intent": "buying", "reason": "two\u2028lines"}`,
		`{"score": 50, "intent": "buying", "reason": "  \u0085 "}`,
		`{"score": "50", "intent": "buying", "reason": "r"}`,
		`{"score": 50, "intent": null, "reason": "r"}`,
		`{"score": 50} trailing`,
		"",
	} {
		f.Add(answer(c), false)
	}
	for _, body := range []string{
		`{"choices": []}`,
		`{"choices": [{"message": {"content": null}}]}`,
		`{"choices": [{"message": {"content": 5}}]}`,
		`{"choices": [{"message": {"content": "{\"score\":1,\"intent\":\"praise\",\"reason\":\"ok\"}"}}]}` + strings.Repeat(" ", 100),
		`[1, 2`,
		"\xff\xfe",
		strings.Repeat("[", 10000),
	} {
		f.Add(body, false)
		f.Add(body, true)
	}
	f.Fuzz(func(t *testing.T, body string, endless bool) {
		b := &countingBody{r: strings.NewReader(body), endless: endless}
		s, err := llmscorer.New(llmscorer.Config{
			URL:      "http://127.0.0.1:1/v1",
			Model:    "m",
			Fallback: markScorer{},
			Client: &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: b, Request: r}, nil
			})},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.Score(context.Background(), match)
		if err != nil {
			t.Fatalf("Score: %v (the fallback never fails)", err)
		}
		if b.read > 1<<20+1 {
			t.Fatalf("read %d bytes of the answer, over its 1 MB bound", b.read)
		}
		if v == fallbackMark {
			return
		}
		if v.Value < 0 || v.Value > 100 {
			t.Errorf("score %d out of 0..100", v.Value)
		}
		if !v.Intent.Valid() {
			t.Errorf("intent %q not one of core's", v.Intent)
		}
		if v.Reason == "" || v.Reason != strings.TrimSpace(v.Reason) || utf8.RuneCountInString(v.Reason) > core.MaxReasonLen {
			t.Errorf("reason %q: empty, padded or over %d characters", v.Reason, core.MaxReasonLen)
		}
		if strings.ContainsFunc(v.Reason, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) {
			t.Errorf("reason %q spans lines", v.Reason)
		}
	})
}
