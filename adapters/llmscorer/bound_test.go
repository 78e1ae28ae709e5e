package llmscorer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// A post can ask the model, inside its text, to write at length before
// its verdict; the request itself caps the answer, so such a post costs
// no more output than any other and the call ends well within the
// timeout. The request shape is the chat completions API's
// (https://platform.openai.com/docs/api-reference/chat/create, max_tokens,
// which OpenAI-compatible servers such as vLLM, llama.cpp and Ollama read
// too).
func TestScoreRequestBoundsTheAnswer(t *testing.T) {
	_, body := scoreRequest(t)
	var req map[string]json.RawMessage
	_ = json.Unmarshal(body, &req)
	var n int
	if err := json.Unmarshal(req["max_tokens"], &n); err != nil || n <= 0 || n > 512 {
		t.Errorf("max_tokens %s, want a bound of at most 512 tokens", req["max_tokens"])
	}
}

// A server that answers 101 Switching Protocols hands over the raw
// connection, which the request's context no longer watches; one that
// then goes quiet must not hold the call, and its slot, past the
// timeout. The answer is HTTP/1.1's (RFC 9110 15.2.2).
func TestScoreUpgradeAnswerEndsAtTimeout(t *testing.T) {
	done := make(chan struct{})
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: earshot-test\r\nConnection: Upgrade\r\n\r\n")
		_ = buf.Flush()
		<-done
	}, 200*time.Millisecond)
	t.Cleanup(func() { close(done) })
	got := make(chan error, 1)
	go func() {
		_, err := f.scorer.Score(context.Background(), match)
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("Score: %v, want the fallback's verdict", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Score still waits on a server that switched protocols, past its timeout")
	}
}
