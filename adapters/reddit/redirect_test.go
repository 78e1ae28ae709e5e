package reddit_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Reddit answers a read of a community that does not exist with a
// redirect to its community search (302 to /subreddits/search.json?q=
// NAME), whose answer is a listing of communities (t5), not of posts.
// Followed, that read as an empty listing: the community showed as read
// whole, its phrases as checked, and the status never said that no such
// community exists.
func TestRedirectToCommunitySearchIsNoSuchCommunity(t *testing.T) {
	c := newClock()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /r/{name}/{listing}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/subreddits/search.json?q="+r.PathValue("name"), http.StatusFound)
	})
	mux.HandleFunc("GET /r/{name}/{listing}/.rss", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/subreddits/search.rss?q="+r.PathValue("name"), http.StatusFound)
	})
	var searched atomic.Int32
	mux.HandleFunc("GET /subreddits/", func(w http.ResponseWriter, r *http.Request) {
		searched.Add(1)
		writeJSON(w, http.StatusOK, []byte(`{"kind":"Listing","data":{"after":null,"children":[
			{"kind":"t5","data":{"display_name":"nosuchcommunityy","name":"t5_abc"}}]}}`))
	})
	srv, _ := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: "nosuchcommunity", Since: time.Unix(t0-1000, 0)}}})
	if !core.IsKind(err, core.KindNotFound) {
		t.Errorf("err = %v, cover %+v: want not found", err, r.Covered)
	}
	if n := searched.Load(); n != 0 {
		t.Errorf("the community search was asked %d times, a request of reddit's budget for nothing", n)
	}
}

// A read that ends in reddit's "no such community" still says what it
// tried, as ports.RedditSource promises of every error: the requests it
// spent count against the cycle's budget, and the ways that refused
// before it count as refusals.
func TestNoSuchCommunityStillSaysWhatWasTried(t *testing.T) {
	c := newClock()
	mux := http.NewServeMux()
	mux.Handle("POST /api/v1/access_token", status(http.StatusUnauthorized, `{"message": "Unauthorized", "error": 401}`))
	mux.Handle("GET /r/nosuchcommunity/new.json", status(http.StatusNotFound, `{"message": "Not Found", "error": 404}`))
	srv, _ := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL, ClientID: clientID, ClientSecret: clientSecret})
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: "nosuchcommunity", Since: time.Unix(t0-1000, 0)}}})
	if !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("err = %v, want not found", err)
	}
	if r.Requests != 1 || len(r.Refused) != 1 || r.Refused[0].Via != ports.RedditViaOAuth {
		t.Errorf("requests %d, refused %+v: want the one JSON request and OAuth's refusal", r.Requests, r.Refused)
	}
}
