package httpapi

import (
	"context"
	"io"
	"iter"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// readCounted is pagedMatches that counts the pages its exports read.
type readCounted struct {
	pagedMatches
	read *atomic.Int64
}

func (c readCounted) Export(ctx context.Context, owner string, q ports.MatchQuery) (iter.Seq2[[]core.Match, error], error) {
	pages, err := c.pagedMatches.Export(ctx, owner, q)
	if err != nil {
		return nil, err
	}
	return func(yield func([]core.Match, error) bool) {
		for p, err := range pages {
			c.read.Add(1)
			if !yield(p, err) {
				return
			}
		}
	}, nil
}

// HEAD on the export answers GET's status and headers without reading a
// page it would never send, so it holds no export slot while a page is
// read; a query GET would refuse is refused alike.
func TestExportHeadReadsNothing(t *testing.T) {
	var got ports.MatchQuery
	var read atomic.Int64
	srv := exportAPI(t, readCounted{pagedMatches{pages: exportPages(2, 3), got: &got}, &read}, unlimited{})
	head := func(query string) *http.Response {
		req, _ := http.NewRequest("HEAD", srv.URL+"/api/v1/matches/export?"+query, nil)
		req.Header.Set("Authorization", "Bearer svc_api_all")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if n, _ := io.Copy(io.Discard, resp.Body); n != 0 {
			t.Fatalf("HEAD answered %d bytes of body", n)
		}
		return resp
	}
	resp := head("format=csv")
	get := getExport(t, srv, "format=csv")
	if resp.StatusCode != get.StatusCode || resp.Header.Get("Content-Type") != get.Header.Get("Content-Type") ||
		resp.Header.Get("Content-Disposition") == "" {
		t.Fatalf("HEAD: %d %v; GET: %d %v", resp.StatusCode, resp.Header, get.StatusCode, get.Header)
	}
	io.Copy(io.Discard, get.Body)
	if n := read.Load(); n != 2 {
		t.Fatalf("%d pages read by a HEAD and a GET of 2 pages, want the GET's 2", n)
	}
	if resp := head("format=csv&q=%22"); resp.StatusCode != 400 {
		t.Fatalf("HEAD of a search GET refuses: %d, want 400", resp.StatusCode)
	}
}
