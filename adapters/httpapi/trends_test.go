package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// fakeTrends answers trends of three days with a few counts, and
// records what the transport handed it.
type fakeTrends struct {
	gotPhrase string
	gotDays   int
}

func (f *fakeTrends) Trends(_ context.Context, owner, phraseID string, days int) (core.Trends, error) {
	f.gotPhrase, f.gotDays = phraseID, days
	d, err := core.CheckTrendDays(days)
	if err != nil {
		return core.Trends{}, err
	}
	if phraseID != "" && phraseID != "p1" {
		return core.Trends{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	now := time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)
	today := core.DayOf(now)
	return core.BuildTrends(phraseID, d, now, []core.DayCount{
		{Day: today, Platform: core.X, Intent: core.IntentBuying, Band: 9, N: 4},
		{Day: today - 1, Platform: core.Reddit, Intent: "", Band: 3, N: 2},
	}), nil
}

func trendsAPI(t *testing.T, svc TrendService) *httptest.Server {
	t.Helper()
	keys := keyOf{"svc_api_read": {ID: "k2", OwnerID: "o1", Kind: core.APIKey}}
	deps := Deps{Keys: keys, Limiter: unlimited{}}
	if svc != nil {
		deps.Trends = svc
	}
	srv := httptest.NewServer(New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, deps))
	t.Cleanup(srv.Close)
	return srv
}

func TestTrendsRoute(t *testing.T) {
	f := &fakeTrends{}
	srv := trendsAPI(t, f)
	status, body := send(t, srv, "GET", "/api/v1/trends?keywordId=p1&days=90", "svc_api_read", "")
	data, _ := body["data"].(map[string]any)
	if status != 200 || f.gotPhrase != "p1" || f.gotDays != 90 || data["keywordId"] != "p1" || data["days"] != 90.0 || data["total"] != 6.0 {
		t.Fatalf("%d %v (handed %q, %d)", status, body, f.gotPhrase, f.gotDays)
	}
	dates := data["dates"].([]any)
	if len(dates) != 90 || dates[0] != "2026-01-01" || dates[89] != "2026-03-31" || len(data["perDay"].([]any)) != 90 {
		t.Fatalf("dates %v", dates)
	}
	x := data["byPlatform"].([]any)[1].(map[string]any)
	if x["platform"] != "x" || x["total"] != 4.0 || x["perDay"].([]any)[89] != 4.0 || x["intent"] != nil {
		t.Fatalf("x: %v", x)
	}
	intents := data["byIntent"].([]any)
	other := intents[len(intents)-1].(map[string]any)
	if len(intents) != len(core.Intents)+1 || other["intent"] != "other" || other["total"] != 2.0 {
		t.Fatalf("intents: %v", intents)
	}
	scores := data["scores"].([]any)
	if len(scores) != 10 || !reflect.DeepEqual(scores[9], map[string]any{"min": 90.0, "max": 100.0, "count": 4.0}) ||
		!reflect.DeepEqual(scores[3], map[string]any{"min": 30.0, "max": 39.0, "count": 2.0}) {
		t.Fatalf("scores: %v", scores)
	}

	// All phrases and 30 days unless asked otherwise.
	status, body = send(t, srv, "GET", "/api/v1/trends", "svc_api_read", "")
	if data := body["data"].(map[string]any); status != 200 || data["keywordId"] != nil || data["days"] != 30.0 || f.gotPhrase != "" || f.gotDays != 0 {
		t.Fatalf("defaults: %d %v", status, body)
	}
	for path, want := range map[string][2]string{
		"/api/v1/trends?days=45":        {"400", "days must be 30 or 90"},
		"/api/v1/trends?days=thirty":    {"400", "days must be 30 or 90"},
		"/api/v1/trends?days=":          {"400", "days must be 30 or 90"},
		"/api/v1/trends?keywordId=":     {"400", "keywordId must name one of your phrases; leave it out for all of them"},
		"/api/v1/trends?keywordId=nope": {"404", "phrase not found"},
	} {
		status, body := send(t, srv, "GET", path, "svc_api_read", "")
		e, _ := body["error"].(map[string]any)
		if want[0] == "400" && (status != 400 || e["code"] != "invalid_parameter" || e["message"] != want[1]) ||
			want[0] == "404" && (status != 404 || e["code"] != "not_found" || e["message"] != want[1]) {
			t.Errorf("%s: %d %v", path, status, body)
		}
	}
	if status, _ := send(t, srv, "GET", "/api/v1/trends", "svc_api_none", ""); status != 401 {
		t.Errorf("without a key: %d", status)
	}
	if status, body := send(t, trendsAPI(t, nil), "GET", "/api/v1/trends", "svc_api_read", ""); status != 404 {
		t.Errorf("without a trend service: %d %v", status, body)
	}
}
