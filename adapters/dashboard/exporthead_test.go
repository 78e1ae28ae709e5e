package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/earshothq/earshot/ports"
)

// A HEAD of the download answers GET's headers without reading the
// view: the server drops a HEAD's body but not the work of writing it,
// so a HEAD would read every page and hold the owner's one export
// meanwhile, refusing the download itself.
func TestInboxExportHeadTakesNoSlot(t *testing.T) {
	var got ports.InboxQuery
	hold := make(chan struct{}) // pages wait on it: a HEAD that reads one stays
	d := searchDashboard(t, searchInbox{fakeInbox: fakeInbox{items: []ports.InboxItem{item(1, "a", "ada", "")}}, got: &got, hold: hold}, true)
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hold) }) // before the server closes, which waits for its handlers
	fetch := func(method string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+"/app/export?format=jsonl", nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
		req.Close = true // a connection each: the server answers a connection's requests in turn
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	head := fetch("HEAD")
	if n, _ := io.Copy(io.Discard, head.Body); head.StatusCode != 200 || n != 0 || head.Header.Get("Content-Disposition") == "" {
		t.Fatalf("HEAD: %d, %d bytes, %v", head.StatusCode, n, head.Header)
	}
	if get := fetch("GET"); get.StatusCode != 200 {
		t.Fatalf("the download after a HEAD: %d, want 200", get.StatusCode)
	}
}
