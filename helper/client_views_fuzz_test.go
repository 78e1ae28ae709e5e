package helper_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
)

// FuzzServerViews hands the client any answer to the requests
// FuzzServerAnswers leaves out: GET and PUT /session, POST /ingest and
// POST /account-status. Seeds are the spec's answers to each
// (spec/live-service.md, as client_test.go serves them) and hostile ones.
// Whatever the server says: no panic, at most 4 MB read of an answer, a
// jar handed on no larger, a non-2xx never taken; and the pause the
// helper draws from an account's view is none, or ends between a minute
// and a day from now, or waits for the owner.
func FuzzServerViews(f *testing.F) {
	for _, s := range []struct {
		route  uint8
		status uint16
		body   string
	}{
		{0, 200, `[{"domain":".reddit.com","name":"reddit_session","value":"v","path":"/","secure":true}]`},
		{0, 404, `{"error":{"code":"not_found","message":"no session"}}`},
		{1, 200, `{"accountId":"acc_1","platform":"x","cookies":3}`},
		{2, 200, `{"accountId":"acc_1","ingested":2,"skipped":1}`},
		{2, 413, `{"error":{"code":"payload_too_large","message":"too many posts"}}`},
		{3, 200, `{"accountId":"acc_1","platform":"x","state":"rate_limited","issue":"rate_limited","action":"wait","requiresAction":false,"retryAfter":900}`},
		{3, 200, `{"accountId":null,"platform":"x","state":"blocked","issue":"ip_blocked","action":"use_proxy","requiresAction":true,"retryAfter":-5}`},
		{3, 200, `{"state":"paused","issue":"checkpoint","action":"reconnect","requiresAction":true}`},
		{3, 200, `{"issue":"x","action":"wait","retryAfter":9223372036854775807}`},
		{3, 200, `{"retryAfter":1e400}`},
		{0, 200, `nul`},
	} {
		f.Add(s.route, s.status, s.body, false)
	}
	f.Add(uint8(0), uint16(200), `"`, true)
	f.Fuzz(func(t *testing.T, route uint8, status uint16, body string, more bool) {
		code := int(status)
		if code < 200 || code > 599 {
			code = 200 + code%400
		}
		tr := &answerTransport{status: code, header: http.Header{}, body: body, more: more}
		c, err := helper.NewClient("http://127.0.0.1:1", "ik_test", &http.Client{Transport: tr})
		if err != nil {
			t.Fatal(err)
		}
		c.Attempts = 1
		c.Sleep = func(context.Context, time.Duration) error { return nil }
		ctx := context.Background()
		switch route % 4 {
		case 0:
			jar, err := c.Session(ctx, "reddit")
			if len(jar) > 4<<20 || err == nil && code/100 != 2 {
				t.Fatalf("answer %d: jar of %d bytes, %v", code, len(jar), err)
			}
		case 1:
			_, err = c.SaveSession(ctx, "x", []core.Cookie{{Domain: ".x.com", Name: "auth_token", Value: "v", Path: "/"}})
		case 2:
			_, err = c.IngestBatch(ctx, "reddit", []helper.Post{{ExternalID: "t3_a", Body: []string{"b"}}}, helper.Unread{})
		case 3:
			s := helper.Signal{Platform: "x", Status: 429}
			var v helper.AccountView
			v, _, err = c.Report(ctx, s)
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			if p := helper.PauseFor(v, s, 0, now); p != nil && !p.NeedsOwner &&
				(p.Until.Before(now.Add(helper.MinPause)) || p.Until.After(now.Add(helper.MaxPause))) {
				t.Fatalf("view %+v pauses until %v", v, p.Until)
			}
		}
		if tr.read > 4<<20+512<<10 {
			t.Fatalf("read %d bytes of one answer", tr.read)
		}
		if code/100 != 2 && err == nil && route%4 != 0 {
			t.Fatalf("answer %d taken", code)
		}
	})
}
