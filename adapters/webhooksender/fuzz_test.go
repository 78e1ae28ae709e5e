package webhooksender_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// FuzzAnswers hands a channel's service, and a plain webhook receiver,
// any answer (status, Retry-After, body) and checks what the sender
// promises of the result: no panic; a 3xx is a redirect; the status is
// the answer's, or 410 when the answer says the destination is gone;
// the reason is short, holds none of the target's secrets and no
// markup or control character; a wait asked for is within
// core.MaxRetryAfter. The seeds are the services' documented answers
// (the same as channel_test.go's, with the links there) and hostile
// variants.
func FuzzAnswers(f *testing.F) {
	for _, c := range []struct {
		kind   uint8
		status uint16
		retry  string
		body   string
	}{
		{0, 403, "", "invalid_token"},
		{0, 429, "30", "rate_limited"},
		{0, 502, "", "<html><body>Bad gateway"},
		{1, 404, "", `{"code": 10015, "message": "Unknown Webhook"}`},
		{1, 429, "1", `{"message": "You are being rate limited.", "retry_after": 64.57, "global": false}`},
		{1, 429, "", `{"retry_after": 1e308, "global": true}`},
		{1, 400, "", `{"code": 50035, "message": "Invalid Form Body ` + discordTok + `"}`},
		{2, 200, "", `{"ok": false, "description": "Bad Request: ` + botToken + `"}`},
		{2, 400, "", `{"ok": false, "error_code": 400, "description": "Bad Request: chat not found"}`},
		{2, 400, "", `{"ok": false, "parameters": {"migrate_to_chat_id": -1001234567890}}`},
		{2, 429, "-5", `{"ok": false, "parameters": {"retry_after": -1e300}}`},
		{2, 403, "", `{"ok": false, "description": "\u202eForbidden: bot was blocked <b>` + strings.Repeat("é", 200) + `"}`},
		{3, 401, "", `{"code": 40101, "http": 401, "error": "unauthorized ` + ntfyToken + `"}`},
		{3, 400, "", `{"code": 40001, "error": "topic ` + ntfyTopic + ` invalid"}`},
		{3, 503, "Wed, 21 Oct 2015 07:28:00 GMT", `{`},
		{4, 500, "", "boom"},
		{4, 429, "99999999999999999999", ""},
		{4, 301, "", ""},
	} {
		f.Add(c.kind, c.status, c.retry, c.body)
	}
	// The service answers what the current input says; the mutex keeps
	// one input at a time.
	var (
		mu                   sync.Mutex
		code                 int
		retryHeader, answerB string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Retry-After", retryHeader)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, answerB)
	}))
	defer srv.Close()
	s := channelSender(srv.URL)
	targets := []core.ChannelTarget{
		{Kind: core.ChannelSlack, URL: srv.URL + slackPath},
		{Kind: core.ChannelDiscord, URL: srv.URL + "/api/webhooks/" + discordID + "/" + discordTok},
		{Kind: core.ChannelTelegram, Token: botToken, ChatID: "-100123"},
		{Kind: core.ChannelNtfy, URL: srv.URL + "/" + ntfyTopic, Token: ntfyToken},
	}
	secrets := []string{"abcdefghijklmnopqrstwxyz", discordTok, botToken, "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", ntfyTopic, ntfyToken}
	body, _ := json.Marshal(map[string]string{"text": "a match"})
	f.Fuzz(func(t *testing.T, kind uint8, status uint16, retry, answer string) {
		mu.Lock()
		defer mu.Unlock()
		code = int(status)
		if code < 200 || code > 599 {
			code = 200 + code%400
		}
		// The header value as a server can send it: a field value holds no
		// line break or NUL.
		retryHeader = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, retry)
		answerB = answer
		var r ports.WebhookResult
		if k := int(kind) % 5; k < 4 {
			tg := targets[k]
			r = s.SendChannel(context.Background(), ports.ChannelMessage{Target: tg, DeliveryID: "dlv_1", Body: body})
		} else {
			r = s.Send(context.Background(), ports.WebhookMessage{URL: srv.URL + "/hook", Event: "match.created", DeliveryID: "dlv_1", Secret: "whsec_x", Body: body})
			if code < 300 && r.Error != "" || code >= 400 && r.Error != "http "+strconv.Itoa(code) {
				t.Errorf("webhook answered %d: reason %q", code, r.Error)
			}
		}
		switch {
		case code >= 300 && code <= 399:
			if r.Error != "redirect" || r.Status != code {
				t.Errorf("%d: %+v, want a redirect", code, r)
			}
		case r.Status != code && r.Status != http.StatusGone:
			t.Errorf("answered %d, result status %d", code, r.Status)
		case code >= 400 && r.Error == "":
			t.Errorf("answered %d, no reason", code)
		}
		if n := utf8.RuneCountInString(r.Error); n > 130 {
			t.Errorf("reason of %d characters: %q", n, r.Error)
		}
		for _, sec := range secrets {
			if strings.Contains(r.Error, sec) {
				t.Errorf("reason %q carries the secret %q", r.Error, sec)
			}
		}
		if strings.ContainsAny(r.Error, "<>&\"") || strings.ContainsFunc(r.Error, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
			t.Errorf("reason %q carries markup or a control character", r.Error)
		}
		if r.RetryAfter < 0 || r.RetryAfter > core.MaxRetryAfter {
			t.Errorf("wait %v outside 0..%v", r.RetryAfter, core.MaxRetryAfter)
		}
	})
}
