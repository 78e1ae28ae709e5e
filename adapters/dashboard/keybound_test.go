package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// The keys page over the real key service: past the live ingest keys an
// owner may hold, a new one is refused beside its name in the service's
// words with the name kept, the page counts the live keys against the
// bound, and the revoked ones listed are the last core.KeptRevokedKeys.
func TestKeysPageBounds(t *testing.T) {
	ctx := context.Background()
	keys, ids := realOwners(t, dbtest.Memory(t), "owner@example.com")
	id := ids[0]
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: ownerSessions{owners: map[string]string{tok: id}}, Inbox: fakeInbox{}, Phrases: fakePhrases{}, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	var made []core.Key
	for range core.MaxIngestKeys {
		_, k, err := keys.CreateIngestKey(ctx, id, "helper")
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, k)
	}
	w := serve(d, formPost("/app/ingest-keys", url.Values{"name": {"laptop"}}, "same-origin", true))
	body := w.Body.String()
	if w.Code != http.StatusForbidden {
		t.Fatalf("status %d, want 403:\n%s", w.Code, body)
	}
	if !strings.Contains(body, `<p class="error" id="e-ingest">an owner may hold at most 20 ingest keys: revoke one first</p>`) ||
		!strings.Contains(body, `<input id="i-name" name="name" value="laptop"`) {
		t.Fatalf("the refusal is not beside the ingest key's name with the name kept:\n%s", body)
	}
	if !strings.Contains(body, "20 of 20 live keys in use") || !strings.Contains(body, "0 of 5 live keys in use") {
		t.Fatalf("the live keys are not counted against each kind's bound:\n%s", body)
	}

	// Revoked through the page, more than are kept: the last ones stay
	// listed, each marked revoked, and a new key fits again.
	var fresh []core.Key
	revoke := func(k core.Key) {
		t.Helper()
		if w := serve(d, formPost("/app/ingest-keys/"+k.ID+"/revoke", nil, "same-origin", true)); w.Code != http.StatusSeeOther {
			t.Fatalf("revoke: %d\n%s", w.Code, w.Body)
		}
	}
	for _, k := range made {
		revoke(k)
		_, k, err := keys.CreateIngestKey(ctx, id, "helper")
		if err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, k)
	}
	revoke(fresh[0])
	revoke(fresh[1])
	if w := serve(d, formPost("/app/ingest-keys/"+made[0].ID+"/revoke", nil, "same-origin", true)); w.Code != http.StatusNotFound {
		t.Fatalf("revoking a key the bound deleted: %d, want 404", w.Code)
	}
	body = get(d, "/app/keys", true).Body.String()
	ingest := body[strings.Index(body, `id="ingest-keys"`):]
	if n := strings.Count(ingest, `<tr class="revoked"`); n != core.KeptRevokedKeys {
		t.Fatalf("%d revoked ingest keys listed, want the last %d", n, core.KeptRevokedKeys)
	}
	if strings.Contains(ingest, `data-key="`+made[1].ID+`"`) || !strings.Contains(ingest, `data-key="`+made[2].ID+`"`) {
		t.Fatal("the revoked keys listed are not the last revoked")
	}
	if !strings.Contains(body, "18 of 20 live keys in use. The last 20 revoked stay listed.") {
		t.Fatalf("the ingest keys' hint:\n%s", body)
	}
}
