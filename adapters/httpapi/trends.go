package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/earshothq/earshot/core"
)

// TrendService reads an owner's trends, the dashboard's trends page
// offered through the API as an extension (x-extension in the OpenAPI
// document). KindInvalid names days; KindNotFound for a phrase that is
// not the owner's. app.Trends is one.
type TrendService interface {
	Trends(ctx context.Context, ownerID, phraseID string, days int) (core.Trends, error)
}

type trendsRequest struct {
	phraseID string
	days     int
}

// decodeTrends reads keywordId (optional: all phrases) and days (30 or
// 90, default 30); as with limit, a parameter given empty is refused.
func decodeTrends(_ context.Context, r *http.Request) (any, error) {
	q, err := query(r)
	if err != nil {
		return nil, err
	}
	if err := onlyOnce(q, "keywordId", "days"); err != nil {
		return nil, err
	}
	var req trendsRequest
	if v, ok := single(q["keywordId"]); ok {
		if v == "" {
			return nil, core.Errorf(core.KindInvalid, "keywordId must name one of your phrases; leave it out for all of them")
		}
		req.phraseID = v
	}
	if v, ok := single(q["days"]); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 {
			return nil, core.Errorf(core.KindInvalid, "days must be %d or %d", core.DefaultTrendDays, core.MaxTrendDays)
		}
		req.days = n
	}
	return req, nil
}

type trendSeriesJSON struct {
	Platform string  `json:"platform,omitempty"`
	Intent   string  `json:"intent,omitempty"`
	Total    int64   `json:"total"`
	PerDay   []int64 `json:"perDay"`
}

type scoreBandJSON struct {
	Min   int   `json:"min"`
	Max   int   `json:"max"`
	Count int64 `json:"count"`
}

type trendsJSON struct {
	KeywordID  *string           `json:"keywordId"`
	Days       int               `json:"days"`
	Dates      []string          `json:"dates"`
	Total      int64             `json:"total"`
	PerDay     []int64           `json:"perDay"`
	ByPlatform []trendSeriesJSON `json:"byPlatform"`
	ByIntent   []trendSeriesJSON `json:"byIntent"`
	Scores     []scoreBandJSON   `json:"scores"`
}

func trendsRecord(tr core.Trends) trendsJSON {
	out := trendsJSON{Days: tr.Days, Total: tr.Total, PerDay: tr.PerDay}
	if tr.PhraseID != "" {
		id := tr.PhraseID
		out.KeywordID = &id
	}
	for i := range tr.Days {
		out.Dates = append(out.Dates, tr.Date(i).Format(time.DateOnly))
	}
	for _, s := range tr.ByPlatform {
		out.ByPlatform = append(out.ByPlatform, trendSeriesJSON{Platform: s.Key, Total: s.Total, PerDay: s.PerDay})
	}
	for _, s := range tr.ByIntent {
		out.ByIntent = append(out.ByIntent, trendSeriesJSON{Intent: s.Key, Total: s.Total, PerDay: s.PerDay})
	}
	for b, n := range tr.Bands {
		lo, hi := core.BandRange(b)
		out.Scores = append(out.Scores, scoreBandJSON{Min: lo, Max: hi, Count: n})
	}
	return out
}

func (a *API) trends(ctx context.Context, req any) (any, error) {
	if a.deps.Trends == nil {
		return nil, core.Errorf(core.KindNotFound, "trends are not offered by this server")
	}
	r := req.(trendsRequest)
	tr, err := a.deps.Trends.Trends(ctx, keyFrom(ctx).OwnerID, r.phraseID, r.days)
	if err != nil {
		return nil, err
	}
	return ok(trendsRecord(tr)), nil
}
