package llmscorer_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/llmscorer"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
	"github.com/earshothq/earshot/testkit/logtest"
)

const (
	apiKey   = "sk-test-5ecret-key-4242"
	model    = "test-model-1"
	postText = "Any good alternatives to Mailchimp? Our list grew and the bill tripled."
)

var match = core.Match{
	ID:       "m_1",
	Phrase:   "mailchimp",
	Platform: core.Platform("reddit"),
	Post:     core.Post{Title: "Leaving Mailchimp", Text: postText},
}

// rulesVerdict is what the fallback gives for match.
var rulesVerdict = score.Rate(match.Phrase, match.Post)

// answer wraps content as a chat completions response body.
func answer(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id":      "chatcmpl-1",
		"object":  "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
	})
	return string(b)
}

// fixture is a model server and a Scorer pointed at it, with the log
// captured.
type fixture struct {
	srv    *httptest.Server
	scorer *llmscorer.Scorer
	logs   *logtest.Buffer
}

func newFixture(t *testing.T, h http.HandlerFunc, timeout time.Duration) *fixture {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	logs := &logtest.Buffer{}
	s, err := llmscorer.New(llmscorer.Config{
		URL:      srv.URL + "/v1",
		Model:    model,
		APIKey:   apiKey,
		Timeout:  timeout,
		Fallback: score.Rules{},
		Client:   srv.Client(),
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, scorer: s, logs: logs}
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func TestScoreModelAnswers(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    core.Score
	}{
		{"good", `{"score": 88, "intent": "recommendation", "reason": "asks for alternatives to mailchimp"}`,
			core.Score{Value: 88, Intent: core.IntentRecommendation, Reason: "asks for alternatives to mailchimp"}},
		{"fenced", "```json\n{\"score\": 72, \"intent\": \"complaint\", \"reason\": \"the bill tripled\"}\n```",
			core.Score{Value: 72, Intent: core.IntentComplaint, Reason: "the bill tripled"}},
		{"fence without info string", "```\n{\"score\": 0, \"intent\": \"promotion\", \"reason\": \"spam\"}\n```",
			core.Score{Value: 0, Intent: core.IntentPromotion, Reason: "spam"}},
		{"intent in capitals, integral float", `{"score": 100.0, "intent": " Buying ", "reason": "ready to buy"}`,
			core.Score{Value: 100, Intent: core.IntentBuying, Reason: "ready to buy"}},
		{"long reason is cut", `{"score": 80, "intent": "buying", "reason": "` + strings.Repeat("é", 300) + `"}`,
			core.Score{Value: 80, Intent: core.IntentBuying, Reason: strings.Repeat("é", core.MaxReasonLen)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, reply(200, answer(tt.content)), time.Second)
			got, err := f.scorer.Score(context.Background(), match)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if f.logs.String() != "" {
				t.Errorf("unexpected log: %s", f.logs)
			}
		})
	}
}

func TestScoreFallsBack(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		hang(r)
		reply(200, answer(`{"score": 90, "intent": "buying", "reason": "too late"}`))(w, r)
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		reason  string // in the warning
	}{
		{"slow", slow, "timeout"},
		{"500", reply(500, `{"error": {"message": "overloaded"}}`), "http 500"},
		{"401", reply(401, `{"error": "bad key"}`), "http 401"},
		{"garbage JSON", reply(200, `{"choices": [`), "not JSON"},
		{"HTML", reply(200, `<html>blocked</html>`), "not JSON"},
		{"wrong shape", reply(200, `{"result": {"score": 80}}`), "no choices"},
		{"null content", reply(200, `{"choices": [{"message": {"content": null}}]}`), "no choices"},
		{"content not JSON", reply(200, answer("I think this is a buying post, 85.")), "not a JSON object"},
		{"missing field", reply(200, answer(`{"score": 80, "intent": "buying"}`)), "lacks"},
		{"bad intent", reply(200, answer(`{"score": 80, "intent": "lead", "reason": "x"}`)), "unknown intent"},
		{"score 150", reply(200, answer(`{"score": 150, "intent": "buying", "reason": "x"}`)), "score 150 out of range"},
		{"score negative", reply(200, answer(`{"score": -1, "intent": "buying", "reason": "x"}`)), "out of range"},
		{"score fraction", reply(200, answer(`{"score": 80.5, "intent": "buying", "reason": "x"}`)), "not an integer"},
		{"empty reason", reply(200, answer(`{"score": 80, "intent": "buying", "reason": "  "}`)), "empty reason"},
		{"multi-line reason", reply(200, answer(`{"score": 80, "intent": "buying", "reason": "one\ntwo"}`)), "spans lines"},
		// NEL is a line break to Unicode (and to Python's splitlines), so a
		// reason holding one is two lines to a reader of the API.
		{"reason with a next-line break", reply(200, answer(`{"score": 80, "intent": "buying", "reason": "one\u0085two"}`)), "spans lines"},
		{"reason with a C1 control", reply(200, answer(`{"score": 80, "intent": "buying", "reason": "one\u009btwo"}`)), "spans lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.handler, 100*time.Millisecond)
			start := time.Now()
			got, err := f.scorer.Score(context.Background(), match)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if got != rulesVerdict {
				t.Errorf("got %+v, want the rules' %+v", got, rulesVerdict)
			}
			checkWarning(t, f.logs.String(), tt.reason)
		})
	}
}

func TestScoreConnectionRefused(t *testing.T) {
	f := newFixture(t, reply(200, answer(`{}`)), time.Second)
	f.srv.Close()
	got, err := f.scorer.Score(context.Background(), match)
	if err != nil {
		t.Fatal(err)
	}
	if got != rulesVerdict {
		t.Errorf("got %+v, want the rules' %+v", got, rulesVerdict)
	}
	checkWarning(t, f.logs.String(), "connect")
}

// scoreRequest scores match against a server that answers with a score,
// and returns the request the server got and its body.
func scoreRequest(t *testing.T) (*http.Request, []byte) {
	t.Helper()
	var (
		mu   sync.Mutex
		got  *http.Request
		body []byte
	)
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, body = r, b
		mu.Unlock()
		reply(200, answer(`{"score": 88, "intent": "recommendation", "reason": "asks for alternatives"}`))(w, r)
	}, time.Second)
	if _, err := f.scorer.Score(context.Background(), match); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return got, body
}

func TestScoreRequest(t *testing.T) {
	got, body := scoreRequest(t)
	if got.Method != http.MethodPost || got.URL.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s", got.Method, got.URL.Path)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer "+apiKey {
		t.Errorf("Authorization %q", h)
	}
	if h := got.Header.Get("Content-Type"); h != "application/json" {
		t.Errorf("Content-Type %q", h)
	}
	var req struct {
		Model          string   `json:"model"`
		Temperature    *float64 `json:"temperature"`
		ResponseFormat struct {
			Type string `json:"type"`
		} `json:"response_format"`
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	if req.Model != model {
		t.Errorf("model %q", req.Model)
	}
	if req.Temperature == nil || *req.Temperature != 0 {
		t.Errorf("temperature %v, want 0 sent", req.Temperature)
	}
	if req.ResponseFormat.Type != "json_object" {
		t.Errorf("response_format %q", req.ResponseFormat.Type)
	}
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		t.Fatalf("messages %+v", req.Messages)
	}
	for _, intent := range core.Intents {
		if !strings.Contains(req.Messages[0].Content, `"`+string(intent)+`"`) {
			t.Errorf("system prompt does not name intent %s", intent)
		}
	}
	var post struct{ Tracked_phrase, Platform, Title, Text string }
	if err := json.Unmarshal([]byte(req.Messages[1].Content), &post); err != nil {
		t.Fatalf("user message is not JSON: %v", err)
	}
	if post.Text != postText || post.Title != match.Post.Title || post.Tracked_phrase != match.Phrase || post.Platform != "reddit" {
		t.Errorf("user message %+v", post)
	}
}

func TestScoreNoKeyNoHeader(t *testing.T) {
	var auth []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = r.Header.Values("Authorization")
		mu.Unlock()
		reply(200, answer(`{"score": 50, "intent": "question", "reason": "asks how"}`))(w, r)
	}))
	defer srv.Close()
	s, err := llmscorer.New(llmscorer.Config{URL: srv.URL + "/v1/", Model: model})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Score(context.Background(), match); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 0 {
		t.Errorf("Authorization sent without a key: %q", auth)
	}
}

// A caller that gave up gets its error, not a fallback verdict.
func TestScoreCallerCanceled(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) { hang(r) }, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := f.scorer.Score(ctx, match)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the caller's deadline", err)
	}
}

type failing struct{}

func (failing) Score(context.Context, core.Match) (core.Score, error) {
	return core.Score{}, errors.New("rules down")
}

func TestScoreFallbackFails(t *testing.T) {
	srv := httptest.NewServer(reply(500, `{}`))
	defer srv.Close()
	s, err := llmscorer.New(llmscorer.Config{URL: srv.URL, Model: model, APIKey: apiKey, Fallback: failing{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Score(context.Background(), match)
	if err == nil || !strings.Contains(err.Error(), "http 500") || !strings.Contains(err.Error(), "rules down") {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), apiKey) {
		t.Errorf("error carries the key: %v", err)
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  llmscorer.Config
	}{
		{"no URL", llmscorer.Config{Model: model}},
		{"not http", llmscorer.Config{URL: "ftp://example.com", Model: model}},
		{"malformed", llmscorer.Config{URL: "https://user:" + apiKey + "@exa mple.com/%zz", Model: model, APIKey: apiKey}},
		{"no host", llmscorer.Config{URL: "https:///v1", Model: model}},
		{"no model", llmscorer.Config{URL: "https://api.example.com/v1", APIKey: apiKey}},
		{"negative timeout", llmscorer.Config{URL: "https://api.example.com/v1", Model: model, Timeout: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llmscorer.New(tt.cfg)
			if !errors.Is(err, &core.Error{Kind: core.KindInvalid}) {
				t.Fatalf("err %v, want KindInvalid", err)
			}
			if strings.Contains(err.Error(), apiKey) {
				t.Errorf("error carries the key: %v", err)
			}
		})
	}
}

// hang waits until the client hangs up (or 5s pass). The server notices a
// hang-up only once the request body has been read, hence the read.
func hang(r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

// checkWarning asserts one warn-level line naming the reason and carrying
// neither the key nor the post.
func checkWarning(t *testing.T, logs, reason string) {
	t.Helper()
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, reason) {
		t.Errorf("log %q lacks a warning with %q", logs, reason)
	}
	if strings.Contains(logs, apiKey) {
		t.Errorf("log carries the API key: %s", logs)
	}
	if strings.Contains(logs, "Mailchimp") || strings.Contains(logs, "bill tripled") {
		t.Errorf("log carries the post: %s", logs)
	}
}

// TestScoreMaxInFlight holds every model call until the test lets it go:
// with twenty callers at once the server never sees more than
// MaxInFlight calls, and every caller still gets the model's verdict.
func TestScoreMaxInFlight(t *testing.T) {
	var mu sync.Mutex
	inFlight, most := 0, 0
	arrived := make(chan struct{}, 100)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		arrived <- struct{}{}
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		io.WriteString(w, answer(`{"score": 77, "intent": "buying", "reason": "asks for an alternative"}`))
	}))
	t.Cleanup(srv.Close)
	s, err := llmscorer.New(llmscorer.Config{URL: srv.URL, Model: model, Timeout: time.Minute, MaxInFlight: 3,
		Client: srv.Client(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxInFlight() != 3 {
		t.Fatalf("MaxInFlight = %d", s.MaxInFlight())
	}
	const callers = 20
	results := make(chan core.Score, callers)
	for range callers {
		go func() {
			v, err := s.Score(context.Background(), match)
			if err != nil {
				t.Error(err)
			}
			results <- v
		}()
	}
	// Hold calls until three wait at the server, give a fourth the chance
	// to arrive (an unbounded scorer sends it), then let one go; repeat
	// until all twenty passed.
	held := 0
	for released := 0; released < callers; released++ {
		for held < min(3, callers-released) {
			<-arrived
			held++
		}
		select {
		case <-arrived:
			held++
		case <-time.After(20 * time.Millisecond):
		}
		release <- struct{}{}
		held--
	}
	for range callers {
		if v := <-results; v.Value != 77 {
			t.Fatalf("verdict %+v, want the model's", v)
		}
	}
	if most > 3 {
		t.Fatalf("%d model calls at once, want at most 3", most)
	}
}
