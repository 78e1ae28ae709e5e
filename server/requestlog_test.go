package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// The request log names the path of every request; a sign-in link's
// token and an address confirmation's stand in theirs, and either signs
// its holder in or changes an owner's address. Neither reaches the log,
// at any level, while the link still works.
func TestLinkTokensStayOutOfTheRequestLog(t *testing.T) {
	rig := newIsolationRig(t)
	o, err := rig.svc.Owners.Create(context.Background(), "o@example.com", "o")
	if err != nil {
		t.Fatal(err)
	}
	link, err := rig.svc.Sessions.LoginLink(context.Background(), o.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, token, _ := strings.Cut(link, "/app/login/")
	confirm, _, err := core.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/app/login/" + token, "/app/account/confirm/" + confirm} {
		if st, body := rig.page(isolationOwner{}, "GET", path, ""); st != http.StatusOK || !strings.Contains(body, `value="`) {
			t.Fatalf("GET %s: %d %.300s", path, st, body)
		}
	}
	if st, body := rig.page(isolationOwner{}, "POST", "/app/login/link", "token="+token); st != http.StatusSeeOther {
		t.Fatalf("the link no longer signs in: %d %.300s", st, body)
	}
	logs := rig.logs.String()
	if !strings.Contains(logs, "msg=request") {
		t.Fatalf("no request lines in the log:\n%s", logs)
	}
	for _, secret := range []string{token, confirm} {
		if strings.Contains(logs, secret) {
			t.Errorf("a link's token is in the log:\n%s", logs)
		}
	}
}
